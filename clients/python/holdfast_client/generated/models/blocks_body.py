from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.block_body import BlockBody


T = TypeVar("T", bound="BlocksBody")


@_attrs_define
class BlocksBody:
    """An account's money by credit block: the blocks that hold money, in the order debits
    and holds draw them, and the general money outside them.

        Attributes:
            account_id (str):
            balance (str):
            balance_micros (int):
            blocks (list[BlockBody]):
            general (str): The balance less the blocks' remaining: money credited without terms; below zero,
                the account's debt (the next credit pays it first).
            general_micros (int):
    """

    account_id: str
    balance: str
    balance_micros: int
    blocks: list[BlockBody]
    general: str
    general_micros: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        balance = self.balance

        balance_micros = self.balance_micros

        blocks = []
        for blocks_item_data in self.blocks:
            blocks_item = blocks_item_data.to_dict()
            blocks.append(blocks_item)

        general = self.general

        general_micros = self.general_micros

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "balance": balance,
                "balance_micros": balance_micros,
                "blocks": blocks,
                "general": general,
                "general_micros": general_micros,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.block_body import BlockBody

        d = dict(src_dict)
        account_id = d.pop("account_id")

        balance = d.pop("balance")

        balance_micros = d.pop("balance_micros")

        blocks = []
        _blocks = d.pop("blocks")
        for blocks_item_data in _blocks:
            blocks_item = BlockBody.from_dict(blocks_item_data)

            blocks.append(blocks_item)

        general = d.pop("general")

        general_micros = d.pop("general_micros")

        blocks_body = cls(
            account_id=account_id,
            balance=balance,
            balance_micros=balance_micros,
            blocks=blocks,
            general=general,
            general_micros=general_micros,
        )

        blocks_body.additional_properties = d
        return blocks_body

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
