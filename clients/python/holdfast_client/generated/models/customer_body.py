from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="CustomerBody")


@_attrs_define
class CustomerBody:
    """A Stripe customer and the account it pays for.

    Attributes:
        account_id (str):
        customer_id (str):
        updated_at (datetime.datetime): RFC 3339: when the map was last set.
    """

    account_id: str
    customer_id: str
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        customer_id = self.customer_id

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "customer_id": customer_id,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account_id = d.pop("account_id")

        customer_id = d.pop("customer_id")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        customer_body = cls(
            account_id=account_id,
            customer_id=customer_id,
            updated_at=updated_at,
        )

        customer_body.additional_properties = d
        return customer_body

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
