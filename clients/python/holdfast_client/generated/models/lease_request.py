from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="LeaseRequest")


@_attrs_define
class LeaseRequest:
    """
    Attributes:
        worker_id (str): The worker's name, for the record: 1–255 characters, no control characters
        lease_seconds (int | None | Unset): 1 … the rate card's `stale_after_seconds`; default its `lease_seconds`.
        max_jobs (int | None | Unset): 1 … 100: lease up to this many jobs at once (waiting `wait_ms` for the first
            only). With it the answer is `{"jobs": [...]}`, empty when nothing came, never 204.
        wait_ms (int | None | Unset): 0 … 30000: how long to wait for a job before answering 204.
    """

    worker_id: str
    lease_seconds: int | None | Unset = UNSET
    max_jobs: int | None | Unset = UNSET
    wait_ms: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        worker_id = self.worker_id

        lease_seconds: int | None | Unset
        if isinstance(self.lease_seconds, Unset):
            lease_seconds = UNSET
        else:
            lease_seconds = self.lease_seconds

        max_jobs: int | None | Unset
        if isinstance(self.max_jobs, Unset):
            max_jobs = UNSET
        else:
            max_jobs = self.max_jobs

        wait_ms: int | None | Unset
        if isinstance(self.wait_ms, Unset):
            wait_ms = UNSET
        else:
            wait_ms = self.wait_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "worker_id": worker_id,
            }
        )
        if lease_seconds is not UNSET:
            field_dict["lease_seconds"] = lease_seconds
        if max_jobs is not UNSET:
            field_dict["max_jobs"] = max_jobs
        if wait_ms is not UNSET:
            field_dict["wait_ms"] = wait_ms

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        worker_id = d.pop("worker_id")

        def _parse_lease_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        lease_seconds = _parse_lease_seconds(d.pop("lease_seconds", UNSET))

        def _parse_max_jobs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_jobs = _parse_max_jobs(d.pop("max_jobs", UNSET))

        def _parse_wait_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        wait_ms = _parse_wait_ms(d.pop("wait_ms", UNSET))

        lease_request = cls(
            worker_id=worker_id,
            lease_seconds=lease_seconds,
            max_jobs=max_jobs,
            wait_ms=wait_ms,
        )

        return lease_request
