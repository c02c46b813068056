from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.credit_category import CreditCategory, check_credit_category
from ..types import UNSET, Unset

T = TypeVar("T", bound="BlockBody")


@_attrs_define
class BlockBody:
    """A credit block: money credited with terms of its own, part of the balance.

    Attributes:
        block_id (str): The id of the credit's ledger entry that made it.
        category (CreditCategory):
        created_at (datetime.datetime):
        expired (bool): Past its expiry and not yet written off: what is free of it is not available.
        granted (str): What the credit put in it (after paying the account's debt).
        granted_micros (int):
        held (str): What open jobs' holds reserved of `remaining`.
        held_micros (int):
        priority (int): 0 to 100: lower is drawn first.
        remaining (str):
        remaining_micros (int):
        expires_at (datetime.datetime | None | Unset):
    """

    block_id: str
    category: CreditCategory
    created_at: datetime.datetime
    expired: bool
    granted: str
    granted_micros: int
    held: str
    held_micros: int
    priority: int
    remaining: str
    remaining_micros: int
    expires_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        block_id = self.block_id

        category: str = self.category

        created_at = self.created_at.isoformat()

        expired = self.expired

        granted = self.granted

        granted_micros = self.granted_micros

        held = self.held

        held_micros = self.held_micros

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

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "block_id": block_id,
                "category": category,
                "created_at": created_at,
                "expired": expired,
                "granted": granted,
                "granted_micros": granted_micros,
                "held": held,
                "held_micros": held_micros,
                "priority": priority,
                "remaining": remaining,
                "remaining_micros": remaining_micros,
            }
        )
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        block_id = d.pop("block_id")

        category = check_credit_category(d.pop("category"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        expired = d.pop("expired")

        granted = d.pop("granted")

        granted_micros = d.pop("granted_micros")

        held = d.pop("held")

        held_micros = d.pop("held_micros")

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

        block_body = cls(
            block_id=block_id,
            category=category,
            created_at=created_at,
            expired=expired,
            granted=granted,
            granted_micros=granted_micros,
            held=held,
            held_micros=held_micros,
            priority=priority,
            remaining=remaining,
            remaining_micros=remaining_micros,
            expires_at=expires_at,
        )

        block_body.additional_properties = d
        return block_body

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
