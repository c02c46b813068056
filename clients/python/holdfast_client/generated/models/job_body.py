from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.job_body_status import JobBodyStatus, check_job_body_status
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.job_actors_body import JobActorsBody
    from ..models.pocket_line import PocketLine


T = TypeVar("T", bound="JobBody")


@_attrs_define
class JobBody:
    """
    Attributes:
        account_id (str):
        actors (JobActorsBody):
        cancel_requested (bool):
        charged (list[PocketLine]):
        created_at (datetime.datetime):
        hold (list[PocketLine]):
        job_id (str):
        kind (str):
        lane (str):
        refunded (list[PocketLine]): What has been refunded of the charge, per pocket (empty when nothing).
        status (JobBodyStatus): `queued`, `in_progress`, `succeeded`, `failed`, `canceled` or `expired`.
        currency (None | str | Unset): The currency (ISO 4217) `hold` and `charged` are in: the card's at submit.
        failure_reason (None | str | Unset):
        finished_at (datetime.datetime | None | Unset):
        lease_expires_at (datetime.datetime | None | Unset):
        payload (Any | Unset):
        started_at (datetime.datetime | None | Unset):
        worker_id (None | str | Unset):
    """

    account_id: str
    actors: JobActorsBody
    cancel_requested: bool
    charged: list[PocketLine]
    created_at: datetime.datetime
    hold: list[PocketLine]
    job_id: str
    kind: str
    lane: str
    refunded: list[PocketLine]
    status: JobBodyStatus
    currency: None | str | Unset = UNSET
    failure_reason: None | str | Unset = UNSET
    finished_at: datetime.datetime | None | Unset = UNSET
    lease_expires_at: datetime.datetime | None | Unset = UNSET
    payload: Any | Unset = UNSET
    started_at: datetime.datetime | None | Unset = UNSET
    worker_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        actors = self.actors.to_dict()

        cancel_requested = self.cancel_requested

        charged = []
        for charged_item_data in self.charged:
            charged_item = charged_item_data.to_dict()
            charged.append(charged_item)

        created_at = self.created_at.isoformat()

        hold = []
        for hold_item_data in self.hold:
            hold_item = hold_item_data.to_dict()
            hold.append(hold_item)

        job_id = self.job_id

        kind = self.kind

        lane = self.lane

        refunded = []
        for refunded_item_data in self.refunded:
            refunded_item = refunded_item_data.to_dict()
            refunded.append(refunded_item)

        status: str = self.status

        currency: None | str | Unset
        if isinstance(self.currency, Unset):
            currency = UNSET
        else:
            currency = self.currency

        failure_reason: None | str | Unset
        if isinstance(self.failure_reason, Unset):
            failure_reason = UNSET
        else:
            failure_reason = self.failure_reason

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        elif isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        lease_expires_at: None | str | Unset
        if isinstance(self.lease_expires_at, Unset):
            lease_expires_at = UNSET
        elif isinstance(self.lease_expires_at, datetime.datetime):
            lease_expires_at = self.lease_expires_at.isoformat()
        else:
            lease_expires_at = self.lease_expires_at

        payload = self.payload

        started_at: None | str | Unset
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        elif isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        worker_id: None | str | Unset
        if isinstance(self.worker_id, Unset):
            worker_id = UNSET
        else:
            worker_id = self.worker_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "actors": actors,
                "cancel_requested": cancel_requested,
                "charged": charged,
                "created_at": created_at,
                "hold": hold,
                "job_id": job_id,
                "kind": kind,
                "lane": lane,
                "refunded": refunded,
                "status": status,
            }
        )
        if currency is not UNSET:
            field_dict["currency"] = currency
        if failure_reason is not UNSET:
            field_dict["failure_reason"] = failure_reason
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if lease_expires_at is not UNSET:
            field_dict["lease_expires_at"] = lease_expires_at
        if payload is not UNSET:
            field_dict["payload"] = payload
        if started_at is not UNSET:
            field_dict["started_at"] = started_at
        if worker_id is not UNSET:
            field_dict["worker_id"] = worker_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.job_actors_body import JobActorsBody
        from ..models.pocket_line import PocketLine

        d = dict(src_dict)
        account_id = d.pop("account_id")

        actors = JobActorsBody.from_dict(d.pop("actors"))

        cancel_requested = d.pop("cancel_requested")

        charged = []
        _charged = d.pop("charged")
        for charged_item_data in _charged:
            charged_item = PocketLine.from_dict(charged_item_data)

            charged.append(charged_item)

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        hold = []
        _hold = d.pop("hold")
        for hold_item_data in _hold:
            hold_item = PocketLine.from_dict(hold_item_data)

            hold.append(hold_item)

        job_id = d.pop("job_id")

        kind = d.pop("kind")

        lane = d.pop("lane")

        refunded = []
        _refunded = d.pop("refunded")
        for refunded_item_data in _refunded:
            refunded_item = PocketLine.from_dict(refunded_item_data)

            refunded.append(refunded_item)

        status = check_job_body_status(d.pop("status"))

        def _parse_currency(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        currency = _parse_currency(d.pop("currency", UNSET))

        def _parse_failure_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        failure_reason = _parse_failure_reason(d.pop("failure_reason", UNSET))

        def _parse_finished_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        def _parse_lease_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                lease_expires_at_type_0 = datetime.datetime.fromisoformat(data)

                return lease_expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        lease_expires_at = _parse_lease_expires_at(d.pop("lease_expires_at", UNSET))

        payload = d.pop("payload", UNSET)

        def _parse_started_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))

        def _parse_worker_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        worker_id = _parse_worker_id(d.pop("worker_id", UNSET))

        job_body = cls(
            account_id=account_id,
            actors=actors,
            cancel_requested=cancel_requested,
            charged=charged,
            created_at=created_at,
            hold=hold,
            job_id=job_id,
            kind=kind,
            lane=lane,
            refunded=refunded,
            status=status,
            currency=currency,
            failure_reason=failure_reason,
            finished_at=finished_at,
            lease_expires_at=lease_expires_at,
            payload=payload,
            started_at=started_at,
            worker_id=worker_id,
        )

        job_body.additional_properties = d
        return job_body

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
