from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.error_detail import ErrorDetail
    from ..models.job_body import JobBody


T = TypeVar("T", bound="JobItemResult")


@_attrs_define
class JobItemResult:
    """One item's answer: the status and body the single call would have answered.

    Attributes:
        status (int): 200, or the refusal's status (404, 409, 422).
        error (ErrorDetail | None | Unset):
        job (JobBody | None | Unset):
    """

    status: int
    error: ErrorDetail | None | Unset = UNSET
    job: JobBody | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.error_detail import ErrorDetail
        from ..models.job_body import JobBody

        status = self.status

        error: dict[str, Any] | None | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        elif isinstance(self.error, ErrorDetail):
            error = self.error.to_dict()
        else:
            error = self.error

        job: dict[str, Any] | None | Unset
        if isinstance(self.job, Unset):
            job = UNSET
        elif isinstance(self.job, JobBody):
            job = self.job.to_dict()
        else:
            job = self.job

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "status": status,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if job is not UNSET:
            field_dict["job"] = job

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.error_detail import ErrorDetail
        from ..models.job_body import JobBody

        d = dict(src_dict)
        status = d.pop("status")

        def _parse_error(data: object) -> ErrorDetail | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_1 = ErrorDetail.from_dict(data)

                return error_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ErrorDetail | None | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_job(data: object) -> JobBody | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                job_type_1 = JobBody.from_dict(data)

                return job_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobBody | None | Unset, data)

        job = _parse_job(d.pop("job", UNSET))

        job_item_result = cls(
            status=status,
            error=error,
            job=job,
        )

        job_item_result.additional_properties = d
        return job_item_result

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
