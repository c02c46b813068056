from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.balance_at_body_allowances import BalanceAtBodyAllowances
    from ..models.block_at_body import BlockAtBody


T = TypeVar("T", bound="BalanceAtBody")


@_attrs_define
class BalanceAtBody:
    """An account's pockets as they were at a time (API.md "Balance at a time"): money as a
    decimal string beside its micros, what was held `null` where the jobs of that time
    may have been pruned.

        Attributes:
            account_id (str):
            allowances (BalanceAtBodyAllowances): Each allowance pocket that existed at `at`.
            at (str): The time asked: every ledger entry written at or before it counts.
            balance (str):
            balance_micros (int):
            blocks (list[BlockAtBody]): The credit blocks made by `at` that held money then, by id.
            currency (str):
            available (None | str | Unset): `balance` less `held` (`null` where `held` is).
            available_micros (int | None | Unset):
            held (None | str | Unset): Money held by the jobs open at `at` (`null`: not known, `at` is before the jobs'
                retention).
            held_micros (int | None | Unset):
            last_entry_id (int | None | Unset): The account's last ledger entry written at or before `at` (`null`: none
                yet).
    """

    account_id: str
    allowances: BalanceAtBodyAllowances
    at: str
    balance: str
    balance_micros: int
    blocks: list[BlockAtBody]
    currency: str
    available: None | str | Unset = UNSET
    available_micros: int | None | Unset = UNSET
    held: None | str | Unset = UNSET
    held_micros: int | None | Unset = UNSET
    last_entry_id: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        allowances = self.allowances.to_dict()

        at = self.at

        balance = self.balance

        balance_micros = self.balance_micros

        blocks = []
        for blocks_item_data in self.blocks:
            blocks_item = blocks_item_data.to_dict()
            blocks.append(blocks_item)

        currency = self.currency

        available: None | str | Unset
        if isinstance(self.available, Unset):
            available = UNSET
        else:
            available = self.available

        available_micros: int | None | Unset
        if isinstance(self.available_micros, Unset):
            available_micros = UNSET
        else:
            available_micros = self.available_micros

        held: None | str | Unset
        if isinstance(self.held, Unset):
            held = UNSET
        else:
            held = self.held

        held_micros: int | None | Unset
        if isinstance(self.held_micros, Unset):
            held_micros = UNSET
        else:
            held_micros = self.held_micros

        last_entry_id: int | None | Unset
        if isinstance(self.last_entry_id, Unset):
            last_entry_id = UNSET
        else:
            last_entry_id = self.last_entry_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "allowances": allowances,
                "at": at,
                "balance": balance,
                "balance_micros": balance_micros,
                "blocks": blocks,
                "currency": currency,
            }
        )
        if available is not UNSET:
            field_dict["available"] = available
        if available_micros is not UNSET:
            field_dict["available_micros"] = available_micros
        if held is not UNSET:
            field_dict["held"] = held
        if held_micros is not UNSET:
            field_dict["held_micros"] = held_micros
        if last_entry_id is not UNSET:
            field_dict["last_entry_id"] = last_entry_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.balance_at_body_allowances import BalanceAtBodyAllowances
        from ..models.block_at_body import BlockAtBody

        d = dict(src_dict)
        account_id = d.pop("account_id")

        allowances = BalanceAtBodyAllowances.from_dict(d.pop("allowances"))

        at = d.pop("at")

        balance = d.pop("balance")

        balance_micros = d.pop("balance_micros")

        blocks = []
        _blocks = d.pop("blocks")
        for blocks_item_data in _blocks:
            blocks_item = BlockAtBody.from_dict(blocks_item_data)

            blocks.append(blocks_item)

        currency = d.pop("currency")

        def _parse_available(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        available = _parse_available(d.pop("available", UNSET))

        def _parse_available_micros(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        available_micros = _parse_available_micros(d.pop("available_micros", UNSET))

        def _parse_held(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        held = _parse_held(d.pop("held", UNSET))

        def _parse_held_micros(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        held_micros = _parse_held_micros(d.pop("held_micros", UNSET))

        def _parse_last_entry_id(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        last_entry_id = _parse_last_entry_id(d.pop("last_entry_id", UNSET))

        balance_at_body = cls(
            account_id=account_id,
            allowances=allowances,
            at=at,
            balance=balance,
            balance_micros=balance_micros,
            blocks=blocks,
            currency=currency,
            available=available,
            available_micros=available_micros,
            held=held,
            held_micros=held_micros,
            last_entry_id=last_entry_id,
        )

        balance_at_body.additional_properties = d
        return balance_at_body

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
