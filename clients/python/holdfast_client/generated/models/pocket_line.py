from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.block_line_body import BlockLineBody


T = TypeVar("T", bound="PocketLine")


@_attrs_define
class PocketLine:
    """One line of a hold or a charge.

    Attributes:
        amount (int | str): An amount: a decimal string for money, an integer count for an allowance.
        pocket (str):
        amount_micros (int | None | Unset): Money only.
        blocks (list[BlockLineBody] | Unset): A money line on an account with credit blocks: what it reserved (a hold)
            or took
            (a charge) of each block, in the order drawn (absent otherwise).
    """

    amount: int | str
    pocket: str
    amount_micros: int | None | Unset = UNSET
    blocks: list[BlockLineBody] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        amount: int | str
        amount = self.amount

        pocket = self.pocket

        amount_micros: int | None | Unset
        if isinstance(self.amount_micros, Unset):
            amount_micros = UNSET
        else:
            amount_micros = self.amount_micros

        blocks: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.blocks, Unset):
            blocks = []
            for blocks_item_data in self.blocks:
                blocks_item = blocks_item_data.to_dict()
                blocks.append(blocks_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "amount": amount,
                "pocket": pocket,
            }
        )
        if amount_micros is not UNSET:
            field_dict["amount_micros"] = amount_micros
        if blocks is not UNSET:
            field_dict["blocks"] = blocks

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.block_line_body import BlockLineBody

        d = dict(src_dict)

        def _parse_amount(data: object) -> int | str:
            return cast(int | str, data)

        amount = _parse_amount(d.pop("amount"))

        pocket = d.pop("pocket")

        def _parse_amount_micros(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        amount_micros = _parse_amount_micros(d.pop("amount_micros", UNSET))

        _blocks = d.pop("blocks", UNSET)
        blocks: list[BlockLineBody] | Unset = UNSET
        if _blocks is not UNSET:
            blocks = []
            for blocks_item_data in _blocks:
                blocks_item = BlockLineBody.from_dict(blocks_item_data)

                blocks.append(blocks_item)

        pocket_line = cls(
            amount=amount,
            pocket=pocket,
            amount_micros=amount_micros,
            blocks=blocks,
        )

        pocket_line.additional_properties = d
        return pocket_line

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
