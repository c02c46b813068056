from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="UsageRequest")


@_attrs_define
class UsageRequest:
    """
    Attributes:
        meter (str): A meter of the rate card in force (else 422 `unknown_meter`)
        seconds (int): A positive whole number of seconds.
    """

    meter: str
    seconds: int

    def to_dict(self) -> dict[str, Any]:
        meter = self.meter

        seconds = self.seconds

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "meter": meter,
                "seconds": seconds,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        meter = d.pop("meter")

        seconds = d.pop("seconds")

        usage_request = cls(
            meter=meter,
            seconds=seconds,
        )

        return usage_request
