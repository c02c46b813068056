from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="StripeAnswer")


@_attrs_define
class StripeAnswer:
    """What an event did.

    Attributes:
        outcome (str): `credited`, `refunded`, `already_applied`, `dispute_recorded`, `refused` (another
            currency than the card's: event `payment.refused`) or `ignored`.
        account_id (None | str | Unset): The account the event applied to, when it applied to one.
        entry_id (int | None | Unset): The ledger entry of the top-up or refund, when it wrote or found one.
    """

    outcome: str
    account_id: None | str | Unset = UNSET
    entry_id: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        outcome = self.outcome

        account_id: None | str | Unset
        if isinstance(self.account_id, Unset):
            account_id = UNSET
        else:
            account_id = self.account_id

        entry_id: int | None | Unset
        if isinstance(self.entry_id, Unset):
            entry_id = UNSET
        else:
            entry_id = self.entry_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "outcome": outcome,
            }
        )
        if account_id is not UNSET:
            field_dict["account_id"] = account_id
        if entry_id is not UNSET:
            field_dict["entry_id"] = entry_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        outcome = d.pop("outcome")

        def _parse_account_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        account_id = _parse_account_id(d.pop("account_id", UNSET))

        def _parse_entry_id(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        entry_id = _parse_entry_id(d.pop("entry_id", UNSET))

        stripe_answer = cls(
            outcome=outcome,
            account_id=account_id,
            entry_id=entry_id,
        )

        stripe_answer.additional_properties = d
        return stripe_answer

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
