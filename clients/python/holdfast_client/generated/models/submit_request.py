from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="SubmitRequest")


@_attrs_define
class SubmitRequest:
    """
    Attributes:
        account_id (str): An account id: 1–128 characters of A-Z a-z 0-9 . _ : -
        idempotency_key (str): 1–255 characters, no control characters; unique per account. The same key again is a
            replay of the first answer; the same key with a different body is 409 `idempotency_mismatch`, and so is a key
            one operation used given to another. The key of a money change (top-up, refund, debit, job refund, grant) is
            kept with its ledger entry, for good; a submit's key record is kept for the rate card's
            `retention.idempotency_days` (default 30): a submit key replayed after its record was pruned is a new request
        kind (str): A kind of the rate card in force (else 422 `unknown_kind`)
        payload (Any | Unset): Anything the worker needs; stored and handed back as given.
    """

    account_id: str
    idempotency_key: str
    kind: str
    payload: Any | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        idempotency_key = self.idempotency_key

        kind = self.kind

        payload = self.payload

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account_id": account_id,
                "idempotency_key": idempotency_key,
                "kind": kind,
            }
        )
        if payload is not UNSET:
            field_dict["payload"] = payload

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account_id = d.pop("account_id")

        idempotency_key = d.pop("idempotency_key")

        kind = d.pop("kind")

        payload = d.pop("payload", UNSET)

        submit_request = cls(
            account_id=account_id,
            idempotency_key=idempotency_key,
            kind=kind,
            payload=payload,
        )

        return submit_request
