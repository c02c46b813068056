from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RechargeRequest")


@_attrs_define
class RechargeRequest:
    """An auto-recharge: when available money falls below `below`, the event
    `account.recharge_requested` asks the operator to charge `amount` (API.md "Accounts").

        Attributes:
            amount (str): Money: a decimal string greater than 0 and at most 1000000000, with at most 6 decimals and no
                leading zero, e.g. `"10.00"`
            below (str): Money: a decimal string from 0 to 1000000000 with at most 6 decimals, e.g. `"0.04"`
    """

    amount: str
    below: str

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        below = self.below

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "amount": amount,
                "below": below,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        below = d.pop("below")

        recharge_request = cls(
            amount=amount,
            below=below,
        )

        return recharge_request
