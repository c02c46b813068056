from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="JobRefundRequest")


@_attrs_define
class JobRefundRequest:
    """
    Attributes:
        idempotency_key (str): 1–255 characters, no control characters; unique per account. The same key again is a
            replay of the first answer; the same key with a different body is 409 `idempotency_mismatch`, and so is a key
            one operation used given to another. The key of a money change (top-up, refund, debit, job refund, grant) is
            kept with its ledger entry, for good; a submit's key record is kept for the rate card's
            `retention.idempotency_days` (default 30): a submit key replayed after its record was pruned is a new request
        reason (str): Why, for the record: 1–500 characters, not only whitespace, no NUL
        amount (None | str | Unset):
    """

    idempotency_key: str
    reason: str
    amount: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        idempotency_key = self.idempotency_key

        reason = self.reason

        amount: None | str | Unset
        if isinstance(self.amount, Unset):
            amount = UNSET
        else:
            amount = self.amount

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "idempotency_key": idempotency_key,
                "reason": reason,
            }
        )
        if amount is not UNSET:
            field_dict["amount"] = amount

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        idempotency_key = d.pop("idempotency_key")

        reason = d.pop("reason")

        def _parse_amount(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        amount = _parse_amount(d.pop("amount", UNSET))

        job_refund_request = cls(
            idempotency_key=idempotency_key,
            reason=reason,
            amount=amount,
        )

        return job_refund_request
