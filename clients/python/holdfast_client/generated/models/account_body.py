from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.account_body_allowances import AccountBodyAllowances
    from ..models.block_body import BlockBody
    from ..models.recharge_body import RechargeBody
    from ..models.spend_body import SpendBody


T = TypeVar("T", bound="AccountBody")


@_attrs_define
class AccountBody:
    """An account with every pocket as it is effective now.

    Attributes:
        account_id (str):
        allowances (AccountBodyAllowances):
        available (str):
        available_micros (int):
        balance (str):
        balance_micros (int):
        blocks (list[BlockBody]): Its credit blocks that hold money, in the order they are drawn (those past their
            expiry last). Empty for an account whose money is all general.
        buffer (str):
        buffer_micros (int):
        created_at (datetime.datetime):
        currency (str): The currency (ISO 4217) of every money amount: the rate card's.
        effective_plan (str):
        held (str):
        held_micros (int):
        max_concurrent_jobs (int): The limit in force (the override, or the plan's).
        open_jobs (int):
        plan (str):
        total_credited (str):
        total_credited_micros (int):
        total_spent (str):
        total_spent_micros (int):
        banned_at (datetime.datetime | None | Unset): When an operator banned it (no new jobs, no debits), or null.
        blocked_at (datetime.datetime | None | Unset):
        last_active_at (datetime.datetime | None | Unset):
        max_concurrent_jobs_override (int | None | Unset): The account's own limit, null when the plan's applies.
        plan_until (datetime.datetime | None | Unset):
        recharge (None | RechargeBody | Unset):
        spend (None | SpendBody | Unset):
        suspended_at (datetime.datetime | None | Unset):
    """

    account_id: str
    allowances: AccountBodyAllowances
    available: str
    available_micros: int
    balance: str
    balance_micros: int
    blocks: list[BlockBody]
    buffer: str
    buffer_micros: int
    created_at: datetime.datetime
    currency: str
    effective_plan: str
    held: str
    held_micros: int
    max_concurrent_jobs: int
    open_jobs: int
    plan: str
    total_credited: str
    total_credited_micros: int
    total_spent: str
    total_spent_micros: int
    banned_at: datetime.datetime | None | Unset = UNSET
    blocked_at: datetime.datetime | None | Unset = UNSET
    last_active_at: datetime.datetime | None | Unset = UNSET
    max_concurrent_jobs_override: int | None | Unset = UNSET
    plan_until: datetime.datetime | None | Unset = UNSET
    recharge: None | RechargeBody | Unset = UNSET
    spend: None | SpendBody | Unset = UNSET
    suspended_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.recharge_body import RechargeBody
        from ..models.spend_body import SpendBody

        account_id = self.account_id

        allowances = self.allowances.to_dict()

        available = self.available

        available_micros = self.available_micros

        balance = self.balance

        balance_micros = self.balance_micros

        blocks = []
        for blocks_item_data in self.blocks:
            blocks_item = blocks_item_data.to_dict()
            blocks.append(blocks_item)

        buffer = self.buffer

        buffer_micros = self.buffer_micros

        created_at = self.created_at.isoformat()

        currency = self.currency

        effective_plan = self.effective_plan

        held = self.held

        held_micros = self.held_micros

        max_concurrent_jobs = self.max_concurrent_jobs

        open_jobs = self.open_jobs

        plan = self.plan

        total_credited = self.total_credited

        total_credited_micros = self.total_credited_micros

        total_spent = self.total_spent

        total_spent_micros = self.total_spent_micros

        banned_at: None | str | Unset
        if isinstance(self.banned_at, Unset):
            banned_at = UNSET
        elif isinstance(self.banned_at, datetime.datetime):
            banned_at = self.banned_at.isoformat()
        else:
            banned_at = self.banned_at

        blocked_at: None | str | Unset
        if isinstance(self.blocked_at, Unset):
            blocked_at = UNSET
        elif isinstance(self.blocked_at, datetime.datetime):
            blocked_at = self.blocked_at.isoformat()
        else:
            blocked_at = self.blocked_at

        last_active_at: None | str | Unset
        if isinstance(self.last_active_at, Unset):
            last_active_at = UNSET
        elif isinstance(self.last_active_at, datetime.datetime):
            last_active_at = self.last_active_at.isoformat()
        else:
            last_active_at = self.last_active_at

        max_concurrent_jobs_override: int | None | Unset
        if isinstance(self.max_concurrent_jobs_override, Unset):
            max_concurrent_jobs_override = UNSET
        else:
            max_concurrent_jobs_override = self.max_concurrent_jobs_override

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
        elif isinstance(self.recharge, RechargeBody):
            recharge = self.recharge.to_dict()
        else:
            recharge = self.recharge

        spend: dict[str, Any] | None | Unset
        if isinstance(self.spend, Unset):
            spend = UNSET
        elif isinstance(self.spend, SpendBody):
            spend = self.spend.to_dict()
        else:
            spend = self.spend

        suspended_at: None | str | Unset
        if isinstance(self.suspended_at, Unset):
            suspended_at = UNSET
        elif isinstance(self.suspended_at, datetime.datetime):
            suspended_at = self.suspended_at.isoformat()
        else:
            suspended_at = self.suspended_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "allowances": allowances,
                "available": available,
                "available_micros": available_micros,
                "balance": balance,
                "balance_micros": balance_micros,
                "blocks": blocks,
                "buffer": buffer,
                "buffer_micros": buffer_micros,
                "created_at": created_at,
                "currency": currency,
                "effective_plan": effective_plan,
                "held": held,
                "held_micros": held_micros,
                "max_concurrent_jobs": max_concurrent_jobs,
                "open_jobs": open_jobs,
                "plan": plan,
                "total_credited": total_credited,
                "total_credited_micros": total_credited_micros,
                "total_spent": total_spent,
                "total_spent_micros": total_spent_micros,
            }
        )
        if banned_at is not UNSET:
            field_dict["banned_at"] = banned_at
        if blocked_at is not UNSET:
            field_dict["blocked_at"] = blocked_at
        if last_active_at is not UNSET:
            field_dict["last_active_at"] = last_active_at
        if max_concurrent_jobs_override is not UNSET:
            field_dict["max_concurrent_jobs_override"] = max_concurrent_jobs_override
        if plan_until is not UNSET:
            field_dict["plan_until"] = plan_until
        if recharge is not UNSET:
            field_dict["recharge"] = recharge
        if spend is not UNSET:
            field_dict["spend"] = spend
        if suspended_at is not UNSET:
            field_dict["suspended_at"] = suspended_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.account_body_allowances import AccountBodyAllowances
        from ..models.block_body import BlockBody
        from ..models.recharge_body import RechargeBody
        from ..models.spend_body import SpendBody

        d = dict(src_dict)
        account_id = d.pop("account_id")

        allowances = AccountBodyAllowances.from_dict(d.pop("allowances"))

        available = d.pop("available")

        available_micros = d.pop("available_micros")

        balance = d.pop("balance")

        balance_micros = d.pop("balance_micros")

        blocks = []
        _blocks = d.pop("blocks")
        for blocks_item_data in _blocks:
            blocks_item = BlockBody.from_dict(blocks_item_data)

            blocks.append(blocks_item)

        buffer = d.pop("buffer")

        buffer_micros = d.pop("buffer_micros")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        currency = d.pop("currency")

        effective_plan = d.pop("effective_plan")

        held = d.pop("held")

        held_micros = d.pop("held_micros")

        max_concurrent_jobs = d.pop("max_concurrent_jobs")

        open_jobs = d.pop("open_jobs")

        plan = d.pop("plan")

        total_credited = d.pop("total_credited")

        total_credited_micros = d.pop("total_credited_micros")

        total_spent = d.pop("total_spent")

        total_spent_micros = d.pop("total_spent_micros")

        def _parse_banned_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                banned_at_type_0 = datetime.datetime.fromisoformat(data)

                return banned_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        banned_at = _parse_banned_at(d.pop("banned_at", UNSET))

        def _parse_blocked_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                blocked_at_type_0 = datetime.datetime.fromisoformat(data)

                return blocked_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        blocked_at = _parse_blocked_at(d.pop("blocked_at", UNSET))

        def _parse_last_active_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_active_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_active_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_active_at = _parse_last_active_at(d.pop("last_active_at", UNSET))

        def _parse_max_concurrent_jobs_override(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_concurrent_jobs_override = _parse_max_concurrent_jobs_override(
            d.pop("max_concurrent_jobs_override", UNSET)
        )

        def _parse_plan_until(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                plan_until_type_0 = datetime.datetime.fromisoformat(data)

                return plan_until_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        plan_until = _parse_plan_until(d.pop("plan_until", UNSET))

        def _parse_recharge(data: object) -> None | RechargeBody | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                recharge_type_1 = RechargeBody.from_dict(data)

                return recharge_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RechargeBody | Unset, data)

        recharge = _parse_recharge(d.pop("recharge", UNSET))

        def _parse_spend(data: object) -> None | SpendBody | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                spend_type_1 = SpendBody.from_dict(data)

                return spend_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SpendBody | Unset, data)

        spend = _parse_spend(d.pop("spend", UNSET))

        def _parse_suspended_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                suspended_at_type_0 = datetime.datetime.fromisoformat(data)

                return suspended_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        suspended_at = _parse_suspended_at(d.pop("suspended_at", UNSET))

        account_body = cls(
            account_id=account_id,
            allowances=allowances,
            available=available,
            available_micros=available_micros,
            balance=balance,
            balance_micros=balance_micros,
            blocks=blocks,
            buffer=buffer,
            buffer_micros=buffer_micros,
            created_at=created_at,
            currency=currency,
            effective_plan=effective_plan,
            held=held,
            held_micros=held_micros,
            max_concurrent_jobs=max_concurrent_jobs,
            open_jobs=open_jobs,
            plan=plan,
            total_credited=total_credited,
            total_credited_micros=total_credited_micros,
            total_spent=total_spent,
            total_spent_micros=total_spent_micros,
            banned_at=banned_at,
            blocked_at=blocked_at,
            last_active_at=last_active_at,
            max_concurrent_jobs_override=max_concurrent_jobs_override,
            plan_until=plan_until,
            recharge=recharge,
            spend=spend,
            suspended_at=suspended_at,
        )

        account_body.additional_properties = d
        return account_body

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
