from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="DeadDeliveryBody")


@_attrs_define
class DeadDeliveryBody:
    """A delivery that failed its last attempt.

    Attributes:
        account_id (str):
        attempts (int):
        created_at (datetime.datetime): When the delivery was queued.
        delivery_id (str):
        endpoint (str): The endpoint's URL, as the rate card gives it.
        event_id (str):
        event_type (str):
        dead_at (datetime.datetime | None | Unset):
        last_error (None | str | Unset):
    """

    account_id: str
    attempts: int
    created_at: datetime.datetime
    delivery_id: str
    endpoint: str
    event_id: str
    event_type: str
    dead_at: datetime.datetime | None | Unset = UNSET
    last_error: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        attempts = self.attempts

        created_at = self.created_at.isoformat()

        delivery_id = self.delivery_id

        endpoint = self.endpoint

        event_id = self.event_id

        event_type = self.event_type

        dead_at: None | str | Unset
        if isinstance(self.dead_at, Unset):
            dead_at = UNSET
        elif isinstance(self.dead_at, datetime.datetime):
            dead_at = self.dead_at.isoformat()
        else:
            dead_at = self.dead_at

        last_error: None | str | Unset
        if isinstance(self.last_error, Unset):
            last_error = UNSET
        else:
            last_error = self.last_error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "attempts": attempts,
                "created_at": created_at,
                "delivery_id": delivery_id,
                "endpoint": endpoint,
                "event_id": event_id,
                "event_type": event_type,
            }
        )
        if dead_at is not UNSET:
            field_dict["dead_at"] = dead_at
        if last_error is not UNSET:
            field_dict["last_error"] = last_error

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account_id = d.pop("account_id")

        attempts = d.pop("attempts")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        delivery_id = d.pop("delivery_id")

        endpoint = d.pop("endpoint")

        event_id = d.pop("event_id")

        event_type = d.pop("event_type")

        def _parse_dead_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                dead_at_type_0 = datetime.datetime.fromisoformat(data)

                return dead_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        dead_at = _parse_dead_at(d.pop("dead_at", UNSET))

        def _parse_last_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_error = _parse_last_error(d.pop("last_error", UNSET))

        dead_delivery_body = cls(
            account_id=account_id,
            attempts=attempts,
            created_at=created_at,
            delivery_id=delivery_id,
            endpoint=endpoint,
            event_id=event_id,
            event_type=event_type,
            dead_at=dead_at,
            last_error=last_error,
        )

        dead_delivery_body.additional_properties = d
        return dead_delivery_body

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
