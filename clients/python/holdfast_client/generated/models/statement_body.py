from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.job_kind_spend_body import JobKindSpendBody
    from ..models.meter_spend_body import MeterSpendBody
    from ..models.statement_line_body import StatementLineBody


T = TypeVar("T", bound="StatementBody")


@_attrs_define
class StatementBody:
    """An account's statement (API.md "Statements"): money as a decimal string beside its
    micros, times RFC 3339 UTC.

        Attributes:
            account_id (str):
            changes (list[StatementLineBody]): The period's money entries by ledger kind (`top_up`, `bonus`, `debit`,
                `capture`,
                `refund`, `job_refund`, `adjustment`), signed.
            closing_balance (str): The money balance before `to`: `opening_balance` plus every change.
            closing_balance_micros (int):
            currency (str):
            from_ (str): The period's start (inclusive).
            held_at_end (str): Money held by the jobs open at `to`.
            held_at_end_micros (int):
            opening_balance (str): The money balance before `from`.
            opening_balance_micros (int):
            spending_by_job_kind (list[JobKindSpendBody]): Debits and captures by the kind of the job they bill (`null`: no
                job of this
                engine), as positive amounts.
            spending_by_meter (list[MeterSpendBody]): Debits by the meter they used, with its seconds (`null`: spending not
                metered —
                debits of an amount, captures).
            to (str): The period's end (exclusive).
    """

    account_id: str
    changes: list[StatementLineBody]
    closing_balance: str
    closing_balance_micros: int
    currency: str
    from_: str
    held_at_end: str
    held_at_end_micros: int
    opening_balance: str
    opening_balance_micros: int
    spending_by_job_kind: list[JobKindSpendBody]
    spending_by_meter: list[MeterSpendBody]
    to: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        changes = []
        for changes_item_data in self.changes:
            changes_item = changes_item_data.to_dict()
            changes.append(changes_item)

        closing_balance = self.closing_balance

        closing_balance_micros = self.closing_balance_micros

        currency = self.currency

        from_ = self.from_

        held_at_end = self.held_at_end

        held_at_end_micros = self.held_at_end_micros

        opening_balance = self.opening_balance

        opening_balance_micros = self.opening_balance_micros

        spending_by_job_kind = []
        for spending_by_job_kind_item_data in self.spending_by_job_kind:
            spending_by_job_kind_item = spending_by_job_kind_item_data.to_dict()
            spending_by_job_kind.append(spending_by_job_kind_item)

        spending_by_meter = []
        for spending_by_meter_item_data in self.spending_by_meter:
            spending_by_meter_item = spending_by_meter_item_data.to_dict()
            spending_by_meter.append(spending_by_meter_item)

        to = self.to

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "changes": changes,
                "closing_balance": closing_balance,
                "closing_balance_micros": closing_balance_micros,
                "currency": currency,
                "from": from_,
                "held_at_end": held_at_end,
                "held_at_end_micros": held_at_end_micros,
                "opening_balance": opening_balance,
                "opening_balance_micros": opening_balance_micros,
                "spending_by_job_kind": spending_by_job_kind,
                "spending_by_meter": spending_by_meter,
                "to": to,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.job_kind_spend_body import JobKindSpendBody
        from ..models.meter_spend_body import MeterSpendBody
        from ..models.statement_line_body import StatementLineBody

        d = dict(src_dict)
        account_id = d.pop("account_id")

        changes = []
        _changes = d.pop("changes")
        for changes_item_data in _changes:
            changes_item = StatementLineBody.from_dict(changes_item_data)

            changes.append(changes_item)

        closing_balance = d.pop("closing_balance")

        closing_balance_micros = d.pop("closing_balance_micros")

        currency = d.pop("currency")

        from_ = d.pop("from")

        held_at_end = d.pop("held_at_end")

        held_at_end_micros = d.pop("held_at_end_micros")

        opening_balance = d.pop("opening_balance")

        opening_balance_micros = d.pop("opening_balance_micros")

        spending_by_job_kind = []
        _spending_by_job_kind = d.pop("spending_by_job_kind")
        for spending_by_job_kind_item_data in _spending_by_job_kind:
            spending_by_job_kind_item = JobKindSpendBody.from_dict(
                spending_by_job_kind_item_data
            )

            spending_by_job_kind.append(spending_by_job_kind_item)

        spending_by_meter = []
        _spending_by_meter = d.pop("spending_by_meter")
        for spending_by_meter_item_data in _spending_by_meter:
            spending_by_meter_item = MeterSpendBody.from_dict(
                spending_by_meter_item_data
            )

            spending_by_meter.append(spending_by_meter_item)

        to = d.pop("to")

        statement_body = cls(
            account_id=account_id,
            changes=changes,
            closing_balance=closing_balance,
            closing_balance_micros=closing_balance_micros,
            currency=currency,
            from_=from_,
            held_at_end=held_at_end,
            held_at_end_micros=held_at_end_micros,
            opening_balance=opening_balance,
            opening_balance_micros=opening_balance_micros,
            spending_by_job_kind=spending_by_job_kind,
            spending_by_meter=spending_by_meter,
            to=to,
        )

        statement_body.additional_properties = d
        return statement_body

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
