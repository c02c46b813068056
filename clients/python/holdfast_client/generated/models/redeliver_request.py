from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RedeliverRequest")


@_attrs_define
class RedeliverRequest:
    """
    Attributes:
        endpoint (str): The endpoint's URL, as the rate card gives it.
        event_id (str): The event, as `GET /v1/events` or a dead delivery names it.
    """

    endpoint: str
    event_id: str

    def to_dict(self) -> dict[str, Any]:
        endpoint = self.endpoint

        event_id = self.event_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "endpoint": endpoint,
                "event_id": event_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        endpoint = d.pop("endpoint")

        event_id = d.pop("event_id")

        redeliver_request = cls(
            endpoint=endpoint,
            event_id=event_id,
        )

        return redeliver_request
