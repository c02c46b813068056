from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="MeterSpendBody")


@_attrs_define
class MeterSpendBody:
    """
    Attributes:
        amount (str):
        amount_micros (int):
        entries (int):
        seconds (int):
        meter (None | str | Unset):
    """

    amount: str
    amount_micros: int
    entries: int
    seconds: int
    meter: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        amount_micros = self.amount_micros

        entries = self.entries

        seconds = self.seconds

        meter: None | str | Unset
        if isinstance(self.meter, Unset):
            meter = UNSET
        else:
            meter = self.meter

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "amount": amount,
                "amount_micros": amount_micros,
                "entries": entries,
                "seconds": seconds,
            }
        )
        if meter is not UNSET:
            field_dict["meter"] = meter

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        amount_micros = d.pop("amount_micros")

        entries = d.pop("entries")

        seconds = d.pop("seconds")

        def _parse_meter(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        meter = _parse_meter(d.pop("meter", UNSET))

        meter_spend_body = cls(
            amount=amount,
            amount_micros=amount_micros,
            entries=entries,
            seconds=seconds,
            meter=meter,
        )

        meter_spend_body.additional_properties = d
        return meter_spend_body

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
