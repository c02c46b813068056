from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.spend_period_name import SpendPeriodName, check_spend_period_name
from ..types import UNSET, Unset

T = TypeVar("T", bound="SpendRequestType0")


@_attrs_define
class SpendRequestType0:
    """
    Attributes:
        limit (str): Money: a decimal string greater than 0 and at most 1000000000, with at most 6 decimals and no
            leading zero, e.g. `"10.00"`
        alerts (list[str] | Unset): Up to 20 amounts (`"40.00"`) or whole percentages of the limit (`"80%"`).
        period (None | SpendPeriodName | Unset):
        timezone (None | str | Unset):
    """

    limit: str
    alerts: list[str] | Unset = UNSET
    period: None | SpendPeriodName | Unset = UNSET
    timezone: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        limit = self.limit

        alerts: list[str] | Unset = UNSET
        if not isinstance(self.alerts, Unset):
            alerts = self.alerts

        period: None | str | Unset
        if isinstance(self.period, Unset):
            period = UNSET
        elif isinstance(self.period, str):
            period = self.period
        else:
            period = self.period

        timezone: None | str | Unset
        if isinstance(self.timezone, Unset):
            timezone = UNSET
        else:
            timezone = self.timezone

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "limit": limit,
            }
        )
        if alerts is not UNSET:
            field_dict["alerts"] = alerts
        if period is not UNSET:
            field_dict["period"] = period
        if timezone is not UNSET:
            field_dict["timezone"] = timezone

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        limit = d.pop("limit")

        alerts = cast(list[str], d.pop("alerts", UNSET))

        def _parse_period(data: object) -> None | SpendPeriodName | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                period_type_1 = check_spend_period_name(data)

                return period_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SpendPeriodName | Unset, data)

        period = _parse_period(d.pop("period", UNSET))

        def _parse_timezone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        timezone = _parse_timezone(d.pop("timezone", UNSET))

        spend_request_type_0 = cls(
            limit=limit,
            alerts=alerts,
            period=period,
            timezone=timezone,
        )

        return spend_request_type_0
