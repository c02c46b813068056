from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.credit_category import CreditCategory, check_credit_category
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
        category (CreditCategory | None | Unset):
        expires_at (datetime.datetime | None | Unset):
        kind (None | TopUpKind | Unset):
        priority (int | None | Unset): 0 to 100 (default 50): lower is drawn first.
    """

    amount: str
    idempotency_key: str
    category: CreditCategory | None | Unset = UNSET
    expires_at: datetime.datetime | None | Unset = UNSET
    kind: None | TopUpKind | Unset = UNSET
    priority: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        idempotency_key = self.idempotency_key

        category: None | str | Unset
        if isinstance(self.category, Unset):
            category = UNSET
        elif isinstance(self.category, str):
            category = self.category
        else:
            category = self.category

        expires_at: None | str | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        elif isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        kind: None | str | Unset
        if isinstance(self.kind, Unset):
            kind = UNSET
        elif isinstance(self.kind, str):
            kind = self.kind
        else:
            kind = self.kind

        priority: int | None | Unset
        if isinstance(self.priority, Unset):
            priority = UNSET
        else:
            priority = self.priority

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "amount": amount,
                "idempotency_key": idempotency_key,
            }
        )
        if category is not UNSET:
            field_dict["category"] = category
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if kind is not UNSET:
            field_dict["kind"] = kind
        if priority is not UNSET:
            field_dict["priority"] = priority

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        idempotency_key = d.pop("idempotency_key")

        def _parse_category(data: object) -> CreditCategory | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                category_type_1 = check_credit_category(data)

                return category_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CreditCategory | None | Unset, data)

        category = _parse_category(d.pop("category", UNSET))

        def _parse_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_1 = datetime.datetime.fromisoformat(data)

                return expires_at_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))

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

        def _parse_priority(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        priority = _parse_priority(d.pop("priority", UNSET))

        top_up_request = cls(
            amount=amount,
            idempotency_key=idempotency_key,
            category=category,
            expires_at=expires_at,
            kind=kind,
            priority=priority,
        )

        return top_up_request
