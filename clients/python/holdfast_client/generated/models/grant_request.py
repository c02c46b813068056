from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="GrantRequest")


@_attrs_define
class GrantRequest:
    """
    Attributes:
        amount (int): Whole items, 1 to 1000000000.
        idempotency_key (str): 1–255 characters, no control characters; unique per account. The same key again is a
            replay of the first answer; the same key with a different body is 409 `idempotency_mismatch`, and so is a key
            one operation used given to another. The key of a money change (top-up, refund, debit, job refund, grant) is
            kept with its ledger entry, for good; a submit's key record is kept for the rate card's
            `retention.idempotency_days` (default 30): a submit key replayed after its record was pruned is a new request
        pocket (str): An allowance pocket of the rate card in force (not `money`; else 422)
        reason (str): Why, for the record: 1–500 characters, not only whitespace, no NUL
    """

    amount: int
    idempotency_key: str
    pocket: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        idempotency_key = self.idempotency_key

        pocket = self.pocket

        reason = self.reason

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "amount": amount,
                "idempotency_key": idempotency_key,
                "pocket": pocket,
                "reason": reason,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        idempotency_key = d.pop("idempotency_key")

        pocket = d.pop("pocket")

        reason = d.pop("reason")

        grant_request = cls(
            amount=amount,
            idempotency_key=idempotency_key,
            pocket=pocket,
            reason=reason,
        )

        return grant_request
