from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RefundRequest")


@_attrs_define
class RefundRequest:
    """
    Attributes:
        amount (str): Money: a decimal string greater than 0 and at most 1000000000, with at most 6 decimals and no
            leading zero, e.g. `"10.00"`
        idempotency_key (str): 1–255 characters, no control characters; unique per account. The same key again is a
            replay of the first answer; the same key with a different body is 409 `idempotency_mismatch`, and so is a key
            one operation used given to another. The key of a money change (top-up, refund, debit, job refund, grant) is
            kept with its ledger entry, for good; a submit's key record is kept for the rate card's
            `retention.idempotency_days` (default 30): a submit key replayed after its record was pruned is a new request
        top_up_idempotency_key (str): 1–255 characters, no control characters; unique per account. The same key again is
            a replay of the first answer; the same key with a different body is 409 `idempotency_mismatch`, and so is a key
            one operation used given to another. The key of a money change (top-up, refund, debit, job refund, grant) is
            kept with its ledger entry, for good; a submit's key record is kept for the rate card's
            `retention.idempotency_days` (default 30): a submit key replayed after its record was pruned is a new request
    """

    amount: str
    idempotency_key: str
    top_up_idempotency_key: str

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        idempotency_key = self.idempotency_key

        top_up_idempotency_key = self.top_up_idempotency_key

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "amount": amount,
                "idempotency_key": idempotency_key,
                "top_up_idempotency_key": top_up_idempotency_key,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        idempotency_key = d.pop("idempotency_key")

        top_up_idempotency_key = d.pop("top_up_idempotency_key")

        refund_request = cls(
            amount=amount,
            idempotency_key=idempotency_key,
            top_up_idempotency_key=top_up_idempotency_key,
        )

        return refund_request
