from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="HeartbeatRequest")


@_attrs_define
class HeartbeatRequest:
    """
    Attributes:
        lease_token (str): The token a lease handed out; a token of another lease is 409 `lease_lost`
    """

    lease_token: str

    def to_dict(self) -> dict[str, Any]:
        lease_token = self.lease_token

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "lease_token": lease_token,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        lease_token = d.pop("lease_token")

        heartbeat_request = cls(
            lease_token=lease_token,
        )

        return heartbeat_request
