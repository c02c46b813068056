from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="PocketAtBody")


@_attrs_define
class PocketAtBody:
    """An allowance pocket at a time: what remained, what open jobs held of it (`null`: not
    known, as the account's `held`).

        Attributes:
            remaining (int):
            held (int | None | Unset):
    """

    remaining: int
    held: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        remaining = self.remaining

        held: int | None | Unset
        if isinstance(self.held, Unset):
            held = UNSET
        else:
            held = self.held

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "remaining": remaining,
            }
        )
        if held is not UNSET:
            field_dict["held"] = held

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        remaining = d.pop("remaining")

        def _parse_held(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        held = _parse_held(d.pop("held", UNSET))

        pocket_at_body = cls(
            remaining=remaining,
            held=held,
        )

        pocket_at_body.additional_properties = d
        return pocket_at_body

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
