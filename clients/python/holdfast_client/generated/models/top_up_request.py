from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.top_up_kind import TopUpKind, check_top_up_kind
from ..types import UNSET, Unset

T = TypeVar("T", bound="TopUpRequest")


@_attrs_define
class TopUpRequest:
    """
    Attributes:
        amount (str): Money: a decimal string greater than 0 and at most 1000000000, with at most 6 decimals and no
            leading zero, e.g. `"10.00"`
        idempotency_key (str): 1–255 characters, no control characters; unique per account. The same key again is a
            replay of the first answer; the same key with a different body is 409 `idempotency_mismatch`, and so is a key
            one operation used given to another. The key of a money change (top-up, refund, debit, job refund, grant) is
            kept with its ledger entry, for good; a submit's key record is kept for the rate card's
            `retention.idempotency_days` (default 30): a submit key replayed after its record was pruned is a new request
        kind (None | TopUpKind | Unset):
    """

    amount: str
    idempotency_key: str
    kind: None | TopUpKind | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        idempotency_key = self.idempotency_key

        kind: None | str | Unset
        if isinstance(self.kind, Unset):
            kind = UNSET
        elif isinstance(self.kind, str):
            kind = self.kind
        else:
            kind = self.kind

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "amount": amount,
                "idempotency_key": idempotency_key,
            }
        )
        if kind is not UNSET:
            field_dict["kind"] = kind

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        idempotency_key = d.pop("idempotency_key")

        def _parse_kind(data: object) -> None | TopUpKind | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                kind_type_1 = check_top_up_kind(data)

                return kind_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TopUpKind | Unset, data)

        kind = _parse_kind(d.pop("kind", UNSET))

        top_up_request = cls(
            amount=amount,
            idempotency_key=idempotency_key,
            kind=kind,
        )

        return top_up_request
