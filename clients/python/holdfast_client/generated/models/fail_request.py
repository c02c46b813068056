from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="FailRequest")


@_attrs_define
class FailRequest:
    """
    Attributes:
        lease_token (str): The token a lease handed out; a token of another lease is 409 `lease_lost`
        reason (None | str | Unset):
    """

    lease_token: str
    reason: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        lease_token = self.lease_token

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "lease_token": lease_token,
            }
        )
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        lease_token = d.pop("lease_token")

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        fail_request = cls(
            lease_token=lease_token,
            reason=reason,
        )

        return fail_request
