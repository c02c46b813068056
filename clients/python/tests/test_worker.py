"""The worker loop against a real server: lease, heartbeat, complete, cancel, lost lease."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from holdfast_server import wait_for
from support import money_entries

from holdfast_client import Holdfast, Lease, Worker, api


def submit_video(service: Holdfast, account_id: str) -> str:
    return service.call(api.jobs.submit, account_id=account_id, kind="video").job_id


def test_the_heartbeat_keeps_a_short_lease_through_a_long_handler(
    service: Holdfast, worker_client: Holdfast, admin: Holdfast, funded_account: str
) -> None:
    job_id = submit_video(service, funded_account)
    first_expiry: list[datetime] = []

    def generate(lease: Lease) -> list[dict[str, str]]:
        first_expiry.append(lease.job.lease_expires_at)
        time.sleep(5)  # 2.5 leases: without heartbeats the sweeper (every 0.5 s) expires it
        return [{"pocket": "money", "amount": "0.30"}]

    worker = Worker(worker_client, "video", generate, worker_id="w1", lease_seconds=2, wait_ms=2000)
    outcome = worker.run_once()

    assert (outcome.job_id, outcome.status) == (job_id, "succeeded")
    assert [(line.pocket, line.amount) for line in outcome.job.charged] == [("money", "0.30")]
    moved_on = outcome.job.lease_expires_at - first_expiry[0]  # times arrive as datetimes
    assert moved_on.total_seconds() > 2  # the heartbeats extended the lease past its first end
    assert money_entries(admin, funded_account)[-1] == ("capture", "-0.30", job_id)
    account = service.call(api.accounts.get_account, account_id=funded_account)
    assert (account.balance, account.held, account.open_jobs) == ("9.70", "0.00", 0)


def test_no_capture_takes_the_whole_hold(
    service: Holdfast, worker_client: Holdfast, admin: Holdfast, funded_account: str
) -> None:
    job_id = submit_video(service, funded_account)

    outcome = Worker(worker_client, "video", lambda lease: None, worker_id="w1", wait_ms=2000).run_once()

    assert outcome.status == "succeeded"
    assert money_entries(admin, funded_account)[-1] == ("capture", "-0.50", job_id)


def test_a_lost_lease_stops_the_heartbeat_and_is_never_completed(
    service: Holdfast, worker_client: Holdfast, admin: Holdfast, funded_account: str
) -> None:
    job_id = submit_video(service, funded_account)

    def too_slow(lease: Lease) -> None:
        wait_for("the heartbeat to find the lease lost", lease.lost.is_set, timeout_seconds=10)

    # A heartbeat slower than the lease: the sweeper expires the job before the first one.
    worker = Worker(
        worker_client,
        "video",
        too_slow,
        worker_id="w1",
        lease_seconds=1,
        wait_ms=2000,
        heartbeat_every_seconds=2.5,
    )
    outcome = worker.run_once()

    assert (outcome.job_id, outcome.status, outcome.job) == (job_id, "lease_lost", None)
    job = service.call(api.jobs.get_job, job_id=job_id)
    assert (job.status, job.charged, job.failure_reason) == ("expired", [], "lease expired")
    assert money_entries(admin, funded_account) == [("top_up", "10.00", None)]
    assert service.call(api.accounts.get_account, account_id=funded_account).held == "0.00"


def test_a_cooperative_cancel_reaches_the_handler_and_ends_the_job_canceled(
    service: Holdfast, worker_client: Holdfast, admin: Holdfast, funded_account: str
) -> None:
    job_id = submit_video(service, funded_account)

    def until_canceled(lease: Lease) -> list[dict[str, str]]:
        wait_for("the cancel to reach the handler", lease.cancel_requested.is_set, timeout_seconds=10)
        return [{"pocket": "money", "amount": "0.10"}]  # the part done before the cancel

    worker = Worker(worker_client, "video", until_canceled, worker_id="w1", lease_seconds=3, wait_ms=2000)
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(worker.run_once)
        wait_for(
            "the job to start", lambda: service.call(api.jobs.get_job, job_id=job_id).status == "in_progress"
        )
        asked = service.call(api.jobs.cancel, job_id=job_id)
        outcome = running.result(timeout=20)

    assert (asked.status, asked.cancel_requested) == ("in_progress", True)
    assert outcome.status == "canceled"
    assert [(line.pocket, line.amount) for line in outcome.job.charged] == [("money", "0.10")]
    assert money_entries(admin, funded_account)[-1] == ("capture", "-0.10", job_id)
    assert service.call(api.accounts.get_account, account_id=funded_account).balance == "9.90"


def test_a_handler_that_raises_fails_the_job_and_charges_nothing(
    service: Holdfast, worker_client: Holdfast, admin: Holdfast, funded_account: str
) -> None:
    job_id = submit_video(service, funded_account)

    def broken(lease: Lease) -> None:
        raise RuntimeError("GPU on fire")

    outcome = Worker(worker_client, "video", broken, worker_id="w1", wait_ms=2000).run_once()

    assert (outcome.job_id, outcome.status) == (job_id, "failed")
    assert outcome.job.failure_reason == "RuntimeError: GPU on fire"
    assert money_entries(admin, funded_account) == [("top_up", "10.00", None)]
    assert service.call(api.accounts.get_account, account_id=funded_account).held == "0.00"


def test_an_empty_lane_long_polls_then_answers_nothing(worker_client: Holdfast) -> None:
    started = time.monotonic()

    outcome = Worker(worker_client, "video", lambda lease: None, worker_id="w1", wait_ms=500).run_once()

    assert outcome is None
    assert time.monotonic() - started >= 0.45


def test_run_stops_when_asked(service: Holdfast, worker_client: Holdfast, funded_account: str) -> None:
    job_ids = [submit_video(service, funded_account) for _ in range(3)]
    stop = threading.Event()
    done: list[str] = []

    def record(lease: Lease) -> None:
        done.append(lease.job.job_id)
        if len(done) == 3:
            stop.set()

    thread = threading.Thread(
        target=Worker(worker_client, "video", record, worker_id="w1", wait_ms=200).run, args=(stop,)
    )
    thread.start()
    thread.join(timeout=20)

    assert not thread.is_alive()
    assert sorted(done) == sorted(job_ids)
    assert {service.call(api.jobs.get_job, job_id=j).status for j in job_ids} == {"succeeded"}
