from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="CaptureLineType0")


@_attrs_define
class CaptureLineType0:
    """
    Attributes:
        amount (str): Money: a decimal string from 0 to 1000000000 with at most 6 decimals, e.g. `"0.04"`
        pocket (Literal['money']):
    """

    amount: str
    pocket: Literal["money"]

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

        pocket = cast(Literal["money"], d.pop("pocket"))
        if pocket != "money":
            raise ValueError(f"pocket must match const 'money', got '{pocket}'")

        capture_line_type_0 = cls(
            amount=amount,
            pocket=pocket,
        )

        return capture_line_type_0
