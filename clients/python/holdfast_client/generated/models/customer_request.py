from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="CustomerRequest")


@_attrs_define
class CustomerRequest:
    """The body of a customer's map.

    Attributes:
        account_id (str): An account id: 1–128 characters of A-Z a-z 0-9 . _ : -
    """

    account_id: str

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account_id": account_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account_id = d.pop("account_id")

        customer_request = cls(
            account_id=account_id,
        )

        return customer_request
