from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.job_body import JobBody


T = TypeVar("T", bound="LeaseBody")


@_attrs_define
class LeaseBody:
    """
    Attributes:
        job (JobBody):
        lease_expires_at (datetime.datetime):
        lease_token (str):
    """

    job: JobBody
    lease_expires_at: datetime.datetime
    lease_token: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        job = self.job.to_dict()

        lease_expires_at = self.lease_expires_at.isoformat()

        lease_token = self.lease_token

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "job": job,
                "lease_expires_at": lease_expires_at,
                "lease_token": lease_token,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.job_body import JobBody

        d = dict(src_dict)
        job = JobBody.from_dict(d.pop("job"))

        lease_expires_at = datetime.datetime.fromisoformat(d.pop("lease_expires_at"))

        lease_token = d.pop("lease_token")

        lease_body = cls(
            job=job,
            lease_expires_at=lease_expires_at,
            lease_token=lease_token,
        )

        lease_body.additional_properties = d
        return lease_body

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
