"""Retries: the same idempotency key on every attempt, back-off on 503 and 429, no retry of another 4xx."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest
from holdfast_server import Server
from proxy import FlakyProxy
from support import FAST_RETRY, money_entries

from holdfast_client import Holdfast, HoldfastError, RetryPolicy, api


def keys(proxy: FlakyProxy) -> list[str]:
    return [json.loads(body)["idempotency_key"] for body in proxy.bodies]


@pytest.fixture
def dropping_first(server: Server) -> Iterator[FlakyProxy]:
    proxy = FlakyProxy(server.url, lambda n: "drop" if n == 0 else "forward")
    yield proxy
    proxy.close()


def test_a_lost_answer_is_retried_with_the_same_key_and_charged_once(
    server: Server, admin: Holdfast, funded_account: str, dropping_first: FlakyProxy
) -> None:
    through_proxy = Holdfast(dropping_first.url, server.service_key, retry=FAST_RETRY)

    result = through_proxy.call(api.money.top_up, account_id=funded_account, amount="5.00")

    assert len(dropping_first.bodies) == 2  # the dropped attempt and its retry
    first, retry = keys(dropping_first)
    assert first == retry and len(first) == 36  # one uuid4 for the logical call
    assert result.account.balance == "15.00"
    assert money_entries(admin, funded_account) == [("top_up", "10.00", None), ("top_up", "5.00", None)]


def test_a_lost_submit_answer_is_one_job_and_one_hold(
    server: Server, service: Holdfast, funded_account: str, dropping_first: FlakyProxy
) -> None:
    through_proxy = Holdfast(dropping_first.url, server.service_key, retry=FAST_RETRY)

    job = through_proxy.call(api.jobs.submit, account_id=funded_account, kind="video")

    assert len(set(keys(dropping_first))) == 1
    account = service.call(api.accounts.get_account, account_id=funded_account)
    assert (account.open_jobs, account.held) == (1, "0.50")
    assert service.call(api.jobs.get_job, job_id=job.job_id).status == "queued"


def test_a_503_is_retried_after_its_retry_after(server: Server, admin: Holdfast, funded_account: str) -> None:
    proxy = FlakyProxy(server.url, lambda n: "503" if n == 0 else "forward", retry_after_seconds=1)
    try:
        started = time.monotonic()
        Holdfast(proxy.url, server.service_key, retry=FAST_RETRY).call(
            api.money.top_up, account_id=funded_account, amount="1.00"
        )
        waited = time.monotonic() - started
    finally:
        proxy.close()

    assert waited >= 1.0
    assert len(proxy.bodies) == 2 and len(set(keys(proxy))) == 1
    assert [kind for kind, _d, _r in money_entries(admin, funded_account)] == ["top_up", "top_up"]


def test_a_429_is_retried_after_its_retry_after(server: Server, admin: Holdfast, funded_account: str) -> None:
    proxy = FlakyProxy(server.url, lambda n: "429" if n == 0 else "forward", retry_after_seconds=1)
    try:
        started = time.monotonic()
        Holdfast(proxy.url, server.service_key, retry=FAST_RETRY).call(
            api.money.top_up, account_id=funded_account, amount="1.00"
        )
        waited = time.monotonic() - started
    finally:
        proxy.close()

    assert waited >= 1.0
    assert len(proxy.bodies) == 2 and len(set(keys(proxy))) == 1
    assert [kind for kind, _d, _r in money_entries(admin, funded_account)] == ["top_up", "top_up"]


def test_503_on_every_attempt_raises_after_the_last(server: Server, funded_account: str) -> None:
    proxy = FlakyProxy(server.url, lambda n: "503", retry_after_seconds=0)
    policy = RetryPolicy(max_attempts=3, base_delay_seconds=0.01)
    try:
        with pytest.raises(HoldfastError) as refused:
            Holdfast(proxy.url, server.service_key, retry=policy).call(
                api.money.top_up, account_id=funded_account, amount="1.00"
            )
    finally:
        proxy.close()

    assert (refused.value.status, refused.value.code) == (503, "database_unavailable")
    assert len(proxy.bodies) == 3


def test_a_4xx_is_never_retried(server: Server, funded_account: str) -> None:
    proxy = FlakyProxy(server.url, lambda n: "forward")
    try:
        with pytest.raises(HoldfastError) as refused:
            Holdfast(proxy.url, server.service_key, retry=FAST_RETRY).call(
                api.money.debit, account_id=funded_account, amount="99.00"
            )
    finally:
        proxy.close()

    assert refused.value.code == "insufficient_funds"
    assert len(proxy.bodies) == 1


def test_a_server_that_is_gone_raises_the_connection_error_after_the_attempts() -> None:
    policy = RetryPolicy(max_attempts=2, base_delay_seconds=0.01)
    hf = Holdfast("http://127.0.0.1:9", "hf_none", retry=policy)  # port 9: nothing listens

    with pytest.raises(httpx.ConnectError):
        hf.call(api.operations.healthz)


def test_the_back_off_grows_exponentially_with_jitter_and_is_bounded() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay_seconds=0.1, max_delay_seconds=1.0)

    for attempt, ceiling in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1.0), (9, 1.0)]:
        waits = [policy.delay_seconds(attempt) for _ in range(500)]
        assert all(0 <= wait <= ceiling for wait in waits)
        assert max(waits) > ceiling * 0.8 and len(set(waits)) > 400  # spread, not fixed

    assert policy.delay_seconds(1, retry_after="1") == 1.0
    assert policy.delay_seconds(1, retry_after="120") == 1.0  # capped at max_delay_seconds
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
