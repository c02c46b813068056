from typing import Literal

EventBodyType = Literal[
    "account.balance_recovered",
    "account.banned",
    "account.low_balance",
    "account.recharge_requested",
    "account.spend_threshold",
    "account.suspended",
    "account.unbanned",
    "account.unsuspended",
    "allowance.granted",
    "allowance.refilled",
    "credit.expired",
    "credit.expiring",
    "job.canceled",
    "job.expired",
    "job.failed",
    "job.refunded",
    "job.succeeded",
    "job.waiting",
    "ledger.adjusted",
    "operator.adjusted",
    "operator.banned",
    "operator.blocked",
    "operator.granted",
    "operator.key_created",
    "operator.key_revoked",
    "operator.plan_changed",
    "operator.spend_rule_changed",
    "operator.unbanned",
    "operator.unblocked",
    "payment.refused",
]

EVENT_BODY_TYPE_VALUES: set[EventBodyType] = {
    "account.balance_recovered",
    "account.banned",
    "account.low_balance",
    "account.recharge_requested",
    "account.spend_threshold",
    "account.suspended",
    "account.unbanned",
    "account.unsuspended",
    "allowance.granted",
    "allowance.refilled",
    "credit.expired",
    "credit.expiring",
    "job.canceled",
    "job.expired",
    "job.failed",
    "job.refunded",
    "job.succeeded",
    "job.waiting",
    "ledger.adjusted",
    "operator.adjusted",
    "operator.banned",
    "operator.blocked",
    "operator.granted",
    "operator.key_created",
    "operator.key_revoked",
    "operator.plan_changed",
    "operator.spend_rule_changed",
    "operator.unbanned",
    "operator.unblocked",
    "payment.refused",
}


def check_event_body_type(value: str) -> EventBodyType:
    if value in EVENT_BODY_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {EVENT_BODY_TYPE_VALUES!r}"
    )
