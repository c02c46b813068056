from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="DebitRequestType0")


@_attrs_define
class DebitRequestType0:
    """
    Attributes:
        amount (str): Money: a decimal string greater than 0 and at most 1000000000, with at most 6 decimals and no
            leading zero, e.g. `"10.00"`
        idempotency_key (str): 1–255 characters, no control characters; unique per account. The same key again is a
            replay of the first answer; the same key with a different body is 409 `idempotency_mismatch`, and so is a key
            one operation used given to another. The key of a money change (top-up, refund, debit, job refund, grant) is
            kept with its ledger entry, for good; a submit's key record is kept for the rate card's
            `retention.idempotency_days` (default 30): a submit key replayed after its record was pruned is a new request
        job_ref (None | str | Unset):
        usage (None | Unset):
    """

    amount: str
    idempotency_key: str
    job_ref: None | str | Unset = UNSET
    usage: None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        idempotency_key = self.idempotency_key

        job_ref: None | str | Unset
        if isinstance(self.job_ref, Unset):
            job_ref = UNSET
        else:
            job_ref = self.job_ref

        usage = self.usage

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "amount": amount,
                "idempotency_key": idempotency_key,
            }
        )
        if job_ref is not UNSET:
            field_dict["job_ref"] = job_ref
        if usage is not UNSET:
            field_dict["usage"] = usage

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        idempotency_key = d.pop("idempotency_key")

        def _parse_job_ref(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        job_ref = _parse_job_ref(d.pop("job_ref", UNSET))

        usage = d.pop("usage", UNSET)

        debit_request_type_0 = cls(
            amount=amount,
            idempotency_key=idempotency_key,
            job_ref=job_ref,
            usage=usage,
        )

        return debit_request_type_0
