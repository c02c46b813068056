from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="JobActorsBody")


@_attrs_define
class JobActorsBody:
    """
    Attributes:
        finished (None | str | Unset):
        leased (None | str | Unset):
        submitted (None | str | Unset):
    """

    finished: None | str | Unset = UNSET
    leased: None | str | Unset = UNSET
    submitted: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        finished: None | str | Unset
        if isinstance(self.finished, Unset):
            finished = UNSET
        else:
            finished = self.finished

        leased: None | str | Unset
        if isinstance(self.leased, Unset):
            leased = UNSET
        else:
            leased = self.leased

        submitted: None | str | Unset
        if isinstance(self.submitted, Unset):
            submitted = UNSET
        else:
            submitted = self.submitted

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if finished is not UNSET:
            field_dict["finished"] = finished
        if leased is not UNSET:
            field_dict["leased"] = leased
        if submitted is not UNSET:
            field_dict["submitted"] = submitted

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_finished(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        finished = _parse_finished(d.pop("finished", UNSET))

        def _parse_leased(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        leased = _parse_leased(d.pop("leased", UNSET))

        def _parse_submitted(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        submitted = _parse_submitted(d.pop("submitted", UNSET))

        job_actors_body = cls(
            finished=finished,
            leased=leased,
            submitted=submitted,
        )

        job_actors_body.additional_properties = d
        return job_actors_body

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
