from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="RechargeBody")


@_attrs_define
class RechargeBody:
    """
    Attributes:
        amount (str):
        amount_micros (int):
        below (str):
        below_micros (int):
    """

    amount: str
    amount_micros: int
    below: str
    below_micros: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        amount_micros = self.amount_micros

        below = self.below

        below_micros = self.below_micros

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "amount": amount,
                "amount_micros": amount_micros,
                "below": below,
                "below_micros": below_micros,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        amount_micros = d.pop("amount_micros")

        below = d.pop("below")

        below_micros = d.pop("below_micros")

        recharge_body = cls(
            amount=amount,
            amount_micros=amount_micros,
            below=below,
            below_micros=below_micros,
        )

        recharge_body.additional_properties = d
        return recharge_body

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
