from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="CaptureLineType1")


@_attrs_define
class CaptureLineType1:
    """
    Attributes:
        amount (int):
        pocket (str): An allowance pocket of the rate card in force (not `money`; else 422)
    """

    amount: int
    pocket: str

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        pocket = self.pocket

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "amount": amount,
                "pocket": pocket,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        pocket = d.pop("pocket")

        capture_line_type_1 = cls(
            amount=amount,
            pocket=pocket,
        )

        return capture_line_type_1
