from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_body_type import EventBodyType, check_event_body_type
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_body_data import EventBodyData


T = TypeVar("T", bound="EventBody")


@_attrs_define
class EventBody:
    """
    Attributes:
        account_id (str):
        created_at (datetime.datetime):
        currency (str): The currency (ISO 4217) of every money amount in `data`.
        data (EventBodyData):
        event_id (str):
        type_ (EventBodyType):
        actor (None | str | Unset): Who caused it (as a ledger entry's `actor`).
        job_id (None | str | Unset):
    """

    account_id: str
    created_at: datetime.datetime
    currency: str
    data: EventBodyData
    event_id: str
    type_: EventBodyType
    actor: None | str | Unset = UNSET
    job_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        created_at = self.created_at.isoformat()

        currency = self.currency

        data = self.data.to_dict()

        event_id = self.event_id

        type_: str = self.type_

        actor: None | str | Unset
        if isinstance(self.actor, Unset):
            actor = UNSET
        else:
            actor = self.actor

        job_id: None | str | Unset
        if isinstance(self.job_id, Unset):
            job_id = UNSET
        else:
            job_id = self.job_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "created_at": created_at,
                "currency": currency,
                "data": data,
                "event_id": event_id,
                "type": type_,
            }
        )
        if actor is not UNSET:
            field_dict["actor"] = actor
        if job_id is not UNSET:
            field_dict["job_id"] = job_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.event_body_data import EventBodyData

        d = dict(src_dict)
        account_id = d.pop("account_id")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        currency = d.pop("currency")

        data = EventBodyData.from_dict(d.pop("data"))

        event_id = d.pop("event_id")

        type_ = check_event_body_type(d.pop("type"))

        def _parse_actor(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        actor = _parse_actor(d.pop("actor", UNSET))

        def _parse_job_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        job_id = _parse_job_id(d.pop("job_id", UNSET))

        event_body = cls(
            account_id=account_id,
            created_at=created_at,
            currency=currency,
            data=data,
            event_id=event_id,
            type_=type_,
            actor=actor,
            job_id=job_id,
        )

        event_body.additional_properties = d
        return event_body

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
