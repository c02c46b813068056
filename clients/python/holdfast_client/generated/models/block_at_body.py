from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.credit_category import CreditCategory, check_credit_category
from ..types import UNSET, Unset

T = TypeVar("T", bound="BlockAtBody")


@_attrs_define
class BlockAtBody:
    """A credit block at a time: its terms, what remained of it, what the jobs open then held
    of it (`null`: not known, as the account's `held`).

        Attributes:
            block_id (str):
            category (CreditCategory):
            created_at (datetime.datetime):
            granted (str):
            granted_micros (int):
            priority (int):
            remaining (str):
            remaining_micros (int):
            expires_at (datetime.datetime | None | Unset):
            held (None | str | Unset):
            held_micros (int | None | Unset):
    """

    block_id: str
    category: CreditCategory
    created_at: datetime.datetime
    granted: str
    granted_micros: int
    priority: int
    remaining: str
    remaining_micros: int
    expires_at: datetime.datetime | None | Unset = UNSET
    held: None | str | Unset = UNSET
    held_micros: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        block_id = self.block_id

        category: str = self.category

        created_at = self.created_at.isoformat()

        granted = self.granted

        granted_micros = self.granted_micros

        priority = self.priority

        remaining = self.remaining

        remaining_micros = self.remaining_micros

        expires_at: None | str | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        elif isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        held: None | str | Unset
        if isinstance(self.held, Unset):
            held = UNSET
        else:
            held = self.held

        held_micros: int | None | Unset
        if isinstance(self.held_micros, Unset):
            held_micros = UNSET
        else:
            held_micros = self.held_micros

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "block_id": block_id,
                "category": category,
                "created_at": created_at,
                "granted": granted,
                "granted_micros": granted_micros,
                "priority": priority,
                "remaining": remaining,
                "remaining_micros": remaining_micros,
            }
        )
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if held is not UNSET:
            field_dict["held"] = held
        if held_micros is not UNSET:
            field_dict["held_micros"] = held_micros

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        block_id = d.pop("block_id")

        category = check_credit_category(d.pop("category"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        granted = d.pop("granted")

        granted_micros = d.pop("granted_micros")

        priority = d.pop("priority")

        remaining = d.pop("remaining")

        remaining_micros = d.pop("remaining_micros")

        def _parse_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = datetime.datetime.fromisoformat(data)

                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))

        def _parse_held(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        held = _parse_held(d.pop("held", UNSET))

        def _parse_held_micros(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        held_micros = _parse_held_micros(d.pop("held_micros", UNSET))

        block_at_body = cls(
            block_id=block_id,
            category=category,
            created_at=created_at,
            granted=granted,
            granted_micros=granted_micros,
            priority=priority,
            remaining=remaining,
            remaining_micros=remaining_micros,
            expires_at=expires_at,
            held=held,
            held_micros=held_micros,
        )

        block_at_body.additional_properties = d
        return block_at_body

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
