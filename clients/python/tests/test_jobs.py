"""Submitting jobs through the client: one logical call, one job, one hold."""

from __future__ import annotations

import pytest
from support import money_entries

from holdfast_client import Holdfast, HoldfastError, api


def test_the_same_logical_call_twice_is_one_job_and_one_hold(service: Holdfast, funded_account: str) -> None:
    click = {"account_id": funded_account, "kind": "video", "payload": {"prompt": "a cat"}}

    first = service.call(api.jobs.submit, idempotency_key="click-1", **click)
    second = service.call(api.jobs.submit, idempotency_key="click-1", **click)

    assert second.job_id == first.job_id
    assert first.status == "queued"
    assert [(line.pocket, line.amount) for line in first.hold] == [("money", "0.50")]
    account = service.call(api.accounts.get_account, account_id=funded_account)
    assert (account.held, account.available, account.open_jobs) == ("0.50", "9.50", 1)

    other = service.call(api.jobs.submit, **click)  # a new logical call: a new key

    assert other.job_id != first.job_id
    assert service.call(api.accounts.get_account, account_id=funded_account).held == "1.00"


def test_the_same_key_with_another_request_is_idempotency_mismatch(
    service: Holdfast, funded_account: str
) -> None:
    service.call(api.jobs.submit, account_id=funded_account, kind="video", idempotency_key="k")

    with pytest.raises(HoldfastError) as refused:
        service.call(
            api.jobs.submit, account_id=funded_account, kind="video", payload={"x": 1}, idempotency_key="k"
        )

    assert (refused.value.status, refused.value.code) == (409, "idempotency_mismatch")


def test_a_submit_without_money_is_refused_and_holds_nothing(service: Holdfast, admin: Holdfast) -> None:
    service.call(api.accounts.put_account, account_id="broke", plan="free")

    with pytest.raises(HoldfastError) as refused:
        service.call(api.jobs.submit, account_id="broke", kind="video")

    assert (refused.value.status, refused.value.code) == (402, "insufficient_funds")
    account = service.call(api.accounts.get_account, account_id="broke")
    assert (account.held_micros, account.open_jobs) == (0, 0)
    assert money_entries(admin, "broke") == []


def test_an_unknown_kind_is_refused(service: Holdfast, funded_account: str) -> None:
    with pytest.raises(HoldfastError) as refused:
        service.call(api.jobs.submit, account_id=funded_account, kind="hologram")

    assert (refused.value.status, refused.value.code) == (422, "unknown_kind")
