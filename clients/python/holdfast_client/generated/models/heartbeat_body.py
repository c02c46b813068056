from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="HeartbeatBody")


@_attrs_define
class HeartbeatBody:
    """
    Attributes:
        cancel_requested (bool):
        lease_expires_at (datetime.datetime):
    """

    cancel_requested: bool
    lease_expires_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cancel_requested = self.cancel_requested

        lease_expires_at = self.lease_expires_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cancel_requested": cancel_requested,
                "lease_expires_at": lease_expires_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cancel_requested = d.pop("cancel_requested")

        lease_expires_at = datetime.datetime.fromisoformat(d.pop("lease_expires_at"))

        heartbeat_body = cls(
            cancel_requested=cancel_requested,
            lease_expires_at=lease_expires_at,
        )

        heartbeat_body.additional_properties = d
        return heartbeat_body

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
