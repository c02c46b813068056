from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.usage_request import UsageRequest


T = TypeVar("T", bound="DebitRequestType1")


@_attrs_define
class DebitRequestType1:
    """
    Attributes:
        idempotency_key (str): 1–255 characters, no control characters; unique per account. The same key again is a
            replay of the first answer; the same key with a different body is 409 `idempotency_mismatch`, and so is a key
            one operation used given to another. The key of a money change (top-up, refund, debit, job refund, grant) is
            kept with its ledger entry, for good; a submit's key record is kept for the rate card's
            `retention.idempotency_days` (default 30): a submit key replayed after its record was pruned is a new request
        usage (UsageRequest):
        amount (None | Unset):
        job_ref (None | str | Unset):
    """

    idempotency_key: str
    usage: UsageRequest
    amount: None | Unset = UNSET
    job_ref: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        idempotency_key = self.idempotency_key

        usage = self.usage.to_dict()

        amount = self.amount

        job_ref: None | str | Unset
        if isinstance(self.job_ref, Unset):
            job_ref = UNSET
        else:
            job_ref = self.job_ref

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "idempotency_key": idempotency_key,
                "usage": usage,
            }
        )
        if amount is not UNSET:
            field_dict["amount"] = amount
        if job_ref is not UNSET:
            field_dict["job_ref"] = job_ref

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.usage_request import UsageRequest

        d = dict(src_dict)
        idempotency_key = d.pop("idempotency_key")

        usage = UsageRequest.from_dict(d.pop("usage"))

        amount = d.pop("amount", UNSET)

        def _parse_job_ref(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        job_ref = _parse_job_ref(d.pop("job_ref", UNSET))

        debit_request_type_1 = cls(
            idempotency_key=idempotency_key,
            usage=usage,
            amount=amount,
            job_ref=job_ref,
        )

        return debit_request_type_1
