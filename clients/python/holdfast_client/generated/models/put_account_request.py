from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.recharge_request import RechargeRequest
    from ..models.spend_request_type_0 import SpendRequestType0
    from ..models.spend_request_type_1 import SpendRequestType1


T = TypeVar("T", bound="PutAccountRequest")


@_attrs_define
class PutAccountRequest:
    """
    Attributes:
        plan (str): A plan of the rate card in force (else 422 `unknown_plan`)
        max_concurrent_jobs (int | None | Unset): 1 to 1000000; absent or null means the plan's.
        plan_until (datetime.datetime | None | Unset):
        recharge (None | RechargeRequest | Unset):
        spend (None | SpendRequestType0 | SpendRequestType1 | Unset):
    """

    plan: str
    max_concurrent_jobs: int | None | Unset = UNSET
    plan_until: datetime.datetime | None | Unset = UNSET
    recharge: None | RechargeRequest | Unset = UNSET
    spend: None | SpendRequestType0 | SpendRequestType1 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.recharge_request import RechargeRequest
        from ..models.spend_request_type_0 import SpendRequestType0
        from ..models.spend_request_type_1 import SpendRequestType1

        plan = self.plan

        max_concurrent_jobs: int | None | Unset
        if isinstance(self.max_concurrent_jobs, Unset):
            max_concurrent_jobs = UNSET
        else:
            max_concurrent_jobs = self.max_concurrent_jobs

        plan_until: None | str | Unset
        if isinstance(self.plan_until, Unset):
            plan_until = UNSET
        elif isinstance(self.plan_until, datetime.datetime):
            plan_until = self.plan_until.isoformat()
        else:
            plan_until = self.plan_until

        recharge: dict[str, Any] | None | Unset
        if isinstance(self.recharge, Unset):
            recharge = UNSET
        elif isinstance(self.recharge, RechargeRequest):
            recharge = self.recharge.to_dict()
        else:
            recharge = self.recharge

        spend: dict[str, Any] | None | Unset
        if isinstance(self.spend, Unset):
            spend = UNSET
        elif isinstance(self.spend, SpendRequestType0) or isinstance(
            self.spend, SpendRequestType1
        ):
            spend = self.spend.to_dict()
        else:
            spend = self.spend

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "plan": plan,
            }
        )
        if max_concurrent_jobs is not UNSET:
            field_dict["max_concurrent_jobs"] = max_concurrent_jobs
        if plan_until is not UNSET:
            field_dict["plan_until"] = plan_until
        if recharge is not UNSET:
            field_dict["recharge"] = recharge
        if spend is not UNSET:
            field_dict["spend"] = spend

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.recharge_request import RechargeRequest
        from ..models.spend_request_type_0 import SpendRequestType0
        from ..models.spend_request_type_1 import SpendRequestType1

        d = dict(src_dict)
        plan = d.pop("plan")

        def _parse_max_concurrent_jobs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_concurrent_jobs = _parse_max_concurrent_jobs(
            d.pop("max_concurrent_jobs", UNSET)
        )

        def _parse_plan_until(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                plan_until_type_1 = datetime.datetime.fromisoformat(data)

                return plan_until_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        plan_until = _parse_plan_until(d.pop("plan_until", UNSET))

        def _parse_recharge(data: object) -> None | RechargeRequest | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                recharge_type_1 = RechargeRequest.from_dict(data)

                return recharge_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RechargeRequest | Unset, data)

        recharge = _parse_recharge(d.pop("recharge", UNSET))

        def _parse_spend(
            data: object,
        ) -> None | SpendRequestType0 | SpendRequestType1 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_spend_request_type_0 = SpendRequestType0.from_dict(
                    data
                )

                return componentsschemas_spend_request_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_spend_request_type_1 = SpendRequestType1.from_dict(
                    data
                )

                return componentsschemas_spend_request_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SpendRequestType0 | SpendRequestType1 | Unset, data)

        spend = _parse_spend(d.pop("spend", UNSET))

        put_account_request = cls(
            plan=plan,
            max_concurrent_jobs=max_concurrent_jobs,
            plan_until=plan_until,
            recharge=recharge,
            spend=spend,
        )

        return put_account_request
