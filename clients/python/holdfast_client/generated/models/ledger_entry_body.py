from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.ledger_entry_body_kind import (
    LedgerEntryBodyKind,
    check_ledger_entry_body_kind,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.block_line_body import BlockLineBody


T = TypeVar("T", bound="LedgerEntryBody")


@_attrs_define
class LedgerEntryBody:
    """One ledger entry: one change of one pocket.

    Attributes:
        account_id (str):
        amount_after (int | str): An amount: a decimal string for money, an integer count for an allowance.
        created_at (datetime.datetime):
        delta (int | str): An amount: a decimal string for money, an integer count for an allowance.
        entry_id (str):
        kind (LedgerEntryBodyKind): `top_up`, `bonus`, `debit`, `capture`, `refund`, `job_refund`, `grant`, `refill`,
            `adjustment` or `expiry` (what was left of a credit block past its expiry).
        pocket (str):
        actor (None | str | Unset): Who caused it: `key:<key id>`, `cli:<user>`, `system:<pass>`, `serve:first-admin-
            key`
            or `library` (null
            for entries written before actors were recorded).
        amount_after_micros (int | None | Unset): Money only.
        blocks (list[BlockLineBody] | Unset): What it moved of each credit block, in the order drawn (absent on an
            account
            without blocks that hold money).
        delta_micros (int | None | Unset): Money only.
        meter (None | str | Unset): A metered debit's meter (absent on every other entry).
        ref (None | str | Unset):
        seconds (int | None | Unset): A metered debit's seconds (absent on every other entry).
    """

    account_id: str
    amount_after: int | str
    created_at: datetime.datetime
    delta: int | str
    entry_id: str
    kind: LedgerEntryBodyKind
    pocket: str
    actor: None | str | Unset = UNSET
    amount_after_micros: int | None | Unset = UNSET
    blocks: list[BlockLineBody] | Unset = UNSET
    delta_micros: int | None | Unset = UNSET
    meter: None | str | Unset = UNSET
    ref: None | str | Unset = UNSET
    seconds: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        amount_after: int | str
        amount_after = self.amount_after

        created_at = self.created_at.isoformat()

        delta: int | str
        delta = self.delta

        entry_id = self.entry_id

        kind: str = self.kind

        pocket = self.pocket

        actor: None | str | Unset
        if isinstance(self.actor, Unset):
            actor = UNSET
        else:
            actor = self.actor

        amount_after_micros: int | None | Unset
        if isinstance(self.amount_after_micros, Unset):
            amount_after_micros = UNSET
        else:
            amount_after_micros = self.amount_after_micros

        blocks: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.blocks, Unset):
            blocks = []
            for blocks_item_data in self.blocks:
                blocks_item = blocks_item_data.to_dict()
                blocks.append(blocks_item)

        delta_micros: int | None | Unset
        if isinstance(self.delta_micros, Unset):
            delta_micros = UNSET
        else:
            delta_micros = self.delta_micros

        meter: None | str | Unset
        if isinstance(self.meter, Unset):
            meter = UNSET
        else:
            meter = self.meter

        ref: None | str | Unset
        if isinstance(self.ref, Unset):
            ref = UNSET
        else:
            ref = self.ref

        seconds: int | None | Unset
        if isinstance(self.seconds, Unset):
            seconds = UNSET
        else:
            seconds = self.seconds

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "amount_after": amount_after,
                "created_at": created_at,
                "delta": delta,
                "entry_id": entry_id,
                "kind": kind,
                "pocket": pocket,
            }
        )
        if actor is not UNSET:
            field_dict["actor"] = actor
        if amount_after_micros is not UNSET:
            field_dict["amount_after_micros"] = amount_after_micros
        if blocks is not UNSET:
            field_dict["blocks"] = blocks
        if delta_micros is not UNSET:
            field_dict["delta_micros"] = delta_micros
        if meter is not UNSET:
            field_dict["meter"] = meter
        if ref is not UNSET:
            field_dict["ref"] = ref
        if seconds is not UNSET:
            field_dict["seconds"] = seconds

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.block_line_body import BlockLineBody

        d = dict(src_dict)
        account_id = d.pop("account_id")

        def _parse_amount_after(data: object) -> int | str:
            return cast(int | str, data)

        amount_after = _parse_amount_after(d.pop("amount_after"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_delta(data: object) -> int | str:
            return cast(int | str, data)

        delta = _parse_delta(d.pop("delta"))

        entry_id = d.pop("entry_id")

        kind = check_ledger_entry_body_kind(d.pop("kind"))

        pocket = d.pop("pocket")

        def _parse_actor(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        actor = _parse_actor(d.pop("actor", UNSET))

        def _parse_amount_after_micros(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        amount_after_micros = _parse_amount_after_micros(
            d.pop("amount_after_micros", UNSET)
        )

        _blocks = d.pop("blocks", UNSET)
        blocks: list[BlockLineBody] | Unset = UNSET
        if _blocks is not UNSET:
            blocks = []
            for blocks_item_data in _blocks:
                blocks_item = BlockLineBody.from_dict(blocks_item_data)

                blocks.append(blocks_item)

        def _parse_delta_micros(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        delta_micros = _parse_delta_micros(d.pop("delta_micros", UNSET))

        def _parse_meter(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        meter = _parse_meter(d.pop("meter", UNSET))

        def _parse_ref(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        ref = _parse_ref(d.pop("ref", UNSET))

        def _parse_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        seconds = _parse_seconds(d.pop("seconds", UNSET))

        ledger_entry_body = cls(
            account_id=account_id,
            amount_after=amount_after,
            created_at=created_at,
            delta=delta,
            entry_id=entry_id,
            kind=kind,
            pocket=pocket,
            actor=actor,
            amount_after_micros=amount_after_micros,
            blocks=blocks,
            delta_micros=delta_micros,
            meter=meter,
            ref=ref,
            seconds=seconds,
        )

        ledger_entry_body.additional_properties = d
        return ledger_entry_body

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
