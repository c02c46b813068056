from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.spend_period_name import SpendPeriodName, check_spend_period_name
from ..types import UNSET, Unset

T = TypeVar("T", bound="SpendBody")


@_attrs_define
class SpendBody:
    """An account's spending in the current day or month of its rule's time zone, under the
    rule in force.

        Attributes:
            alerts (list[str]): The thresholds whose first crossing in a period is told as
                `account.spend_threshold`: amounts or percentages of the limit, as set.
            own (bool): Whether the rule is the account's own (else its plan's).
            period (SpendPeriodName): The length of a spending period: a calendar day or month of the rule's time zone.
            period_end (str):
            period_start (str):
            spent (str): Money debits and captures less money job refunds in the period.
            spent_micros (int):
            timezone (str): The IANA time zone whose days and months the rule counts (`UTC` by default). Example: UTC.
            left (None | str | Unset): `limit − spent − held` (`null` without a limit); what a debit or a submit's money
                hold may still take. Below zero when captures went past it.
            left_micros (int | None | Unset):
            limit (None | str | Unset): The hard limit of the period's spending (`null`: none, thresholds only).
            limit_micros (int | None | Unset):
    """

    alerts: list[str]
    own: bool
    period: SpendPeriodName
    period_end: str
    period_start: str
    spent: str
    spent_micros: int
    timezone: str
    left: None | str | Unset = UNSET
    left_micros: int | None | Unset = UNSET
    limit: None | str | Unset = UNSET
    limit_micros: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        alerts = self.alerts

        own = self.own

        period: str = self.period

        period_end = self.period_end

        period_start = self.period_start

        spent = self.spent

        spent_micros = self.spent_micros

        timezone = self.timezone

        left: None | str | Unset
        if isinstance(self.left, Unset):
            left = UNSET
        else:
            left = self.left

        left_micros: int | None | Unset
        if isinstance(self.left_micros, Unset):
            left_micros = UNSET
        else:
            left_micros = self.left_micros

        limit: None | str | Unset
        if isinstance(self.limit, Unset):
            limit = UNSET
        else:
            limit = self.limit

        limit_micros: int | None | Unset
        if isinstance(self.limit_micros, Unset):
            limit_micros = UNSET
        else:
            limit_micros = self.limit_micros

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "alerts": alerts,
                "own": own,
                "period": period,
                "period_end": period_end,
                "period_start": period_start,
                "spent": spent,
                "spent_micros": spent_micros,
                "timezone": timezone,
            }
        )
        if left is not UNSET:
            field_dict["left"] = left
        if left_micros is not UNSET:
            field_dict["left_micros"] = left_micros
        if limit is not UNSET:
            field_dict["limit"] = limit
        if limit_micros is not UNSET:
            field_dict["limit_micros"] = limit_micros

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        alerts = cast(list[str], d.pop("alerts"))

        own = d.pop("own")

        period = check_spend_period_name(d.pop("period"))

        period_end = d.pop("period_end")

        period_start = d.pop("period_start")

        spent = d.pop("spent")

        spent_micros = d.pop("spent_micros")

        timezone = d.pop("timezone")

        def _parse_left(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        left = _parse_left(d.pop("left", UNSET))

        def _parse_left_micros(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        left_micros = _parse_left_micros(d.pop("left_micros", UNSET))

        def _parse_limit(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        limit = _parse_limit(d.pop("limit", UNSET))

        def _parse_limit_micros(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        limit_micros = _parse_limit_micros(d.pop("limit_micros", UNSET))

        spend_body = cls(
            alerts=alerts,
            own=own,
            period=period,
            period_end=period_end,
            period_start=period_start,
            spent=spent,
            spent_micros=spent_micros,
            timezone=timezone,
            left=left,
            left_micros=left_micros,
            limit=limit,
            limit_micros=limit_micros,
        )

        spend_body.additional_properties = d
        return spend_body

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
