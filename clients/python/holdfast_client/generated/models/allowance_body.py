from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="AllowanceBody")


@_attrs_define
class AllowanceBody:
    """
    Attributes:
        cycle_started_at (datetime.datetime):
        held (int):
        quota (int):
        remaining (int):
        refills_at (datetime.datetime | None | Unset):
    """

    cycle_started_at: datetime.datetime
    held: int
    quota: int
    remaining: int
    refills_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cycle_started_at = self.cycle_started_at.isoformat()

        held = self.held

        quota = self.quota

        remaining = self.remaining

        refills_at: None | str | Unset
        if isinstance(self.refills_at, Unset):
            refills_at = UNSET
        elif isinstance(self.refills_at, datetime.datetime):
            refills_at = self.refills_at.isoformat()
        else:
            refills_at = self.refills_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cycle_started_at": cycle_started_at,
                "held": held,
                "quota": quota,
                "remaining": remaining,
            }
        )
        if refills_at is not UNSET:
            field_dict["refills_at"] = refills_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cycle_started_at = datetime.datetime.fromisoformat(d.pop("cycle_started_at"))

        held = d.pop("held")

        quota = d.pop("quota")

        remaining = d.pop("remaining")

        def _parse_refills_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                refills_at_type_0 = datetime.datetime.fromisoformat(data)

                return refills_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        refills_at = _parse_refills_at(d.pop("refills_at", UNSET))

        allowance_body = cls(
            cycle_started_at=cycle_started_at,
            held=held,
            quota=quota,
            remaining=remaining,
            refills_at=refills_at,
        )

        allowance_body.additional_properties = d
        return allowance_body

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
