"""The worker loop: lease a job, keep its lease alive while the handler runs, finish it.

The protocol is API.md "Workers": a lease with `wait_ms` (a long poll); heartbeats from a
separate thread at most every third of the lease; `complete` (optionally with a
`capture`) or `fail` with the lease's token. A heartbeat's answer says whether a
cooperative cancel was asked: the handler sees it and ends early, and the loop completes
with what the handler captured (the job then ends `canceled`). A lost lease (409
`lease_lost`) stops the heartbeat and is reported, and the job is never completed: the
server has already released its hold.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

import httpx

from .client import Holdfast
from .errors import HoldfastError
from .generated.api.workers import complete, fail, heartbeat, lease
from .generated.models import JobBody

log = logging.getLogger("holdfast_client.worker")

# What the handler returns: None captures the whole hold; a list of capture lines
# ({"pocket": "money", "amount": "0.20"}) captures those and releases the rest.
Capture = list[dict[str, Any]] | None

MAX_REASON_BYTES = 4096  # the API's limit on a fail's `reason`

# Answers that mean this worker no longer holds the job (API.md "Workers").
LOST_LEASE_CODES = frozenset({"lease_lost", "already_finished", "job_not_found"})


@dataclass
class Lease:
    """One leased job, as the handler sees it while it works on it."""

    job: JobBody
    token: str
    cancel_requested: threading.Event = field(default_factory=threading.Event)
    lost: threading.Event = field(default_factory=threading.Event)

    def should_stop(self) -> bool:
        """True once a cancel was asked or the lease was lost: stop working soon."""
        return self.cancel_requested.is_set() or self.lost.is_set()


@dataclass(frozen=True)
class Outcome:
    """How one leased job ended for this worker: the job's final status (`succeeded`,
    `canceled`, `failed`), or `lease_lost` when it was taken away (then `job` is None)."""

    job_id: str
    status: str
    job: JobBody | None


Handler = Callable[[Lease], Capture]


class Worker:
    """Leases jobs of one lane and runs `handler` on each.

    The handler returns what to capture (see `Capture`); an exception from it fails the
    job with the exception as the reason. A long handler should check
    `lease.should_stop()` now and then.
    """

    def __init__(
        self,
        hf: Holdfast,
        lane: str,
        handler: Handler,
        *,
        worker_id: str,
        lease_seconds: int = 60,
        wait_ms: int = 20_000,
        heartbeat_every_seconds: float | None = None,
    ) -> None:
        self.hf = hf
        self.lane = lane
        self.handler = handler
        self.worker_id = worker_id
        self.lease_seconds = lease_seconds
        self.wait_ms = wait_ms
        self.heartbeat_every_seconds = heartbeat_every_seconds or lease_seconds / 3

    def run(self, stop: threading.Event) -> None:
        """Works until `stop` is set (checked between jobs and after each empty lease).
        A server that stays unreachable through a call's retries is waited for, not fatal."""
        while not stop.is_set():
            try:
                self.run_once()
            except (httpx.HTTPError, HoldfastError) as error:
                if isinstance(error, HoldfastError) and error.status != 503:
                    raise
                log.warning("lane %s: server unavailable: %s", self.lane, error)
                stop.wait(self.hf.retry.max_delay_seconds)

    def run_once(self) -> Outcome | None:
        """Leases at most one job (waiting up to `wait_ms`), works it and finishes it.
        None when no job came."""
        answer = self.hf.call(
            lease,
            lane=self.lane,
            worker_id=self.worker_id,
            lease_seconds=self.lease_seconds,
            wait_ms=self.wait_ms,
        )
        if answer is None:
            return None
        leased = Lease(job=answer.job, token=answer.lease_token)
        with _Heartbeat(self.hf, leased, self.heartbeat_every_seconds):
            capture, failure = _run_handler(self.handler, leased)
        return self._finish(leased, capture, failure)

    def _finish(self, leased: Lease, capture: Capture, failure: str | None) -> Outcome:
        """Completes or fails the job, unless its lease is lost."""
        job_id = leased.job.job_id
        if leased.lost.is_set():
            return _lost(job_id, "the heartbeat was refused")
        try:
            if failure is not None:
                job = self.hf.call(fail, job_id=job_id, lease_token=leased.token, reason=failure)
            elif capture is None:
                job = self.hf.call(complete, job_id=job_id, lease_token=leased.token)
            else:
                job = self.hf.call(complete, job_id=job_id, lease_token=leased.token, capture=capture)
        except HoldfastError as error:
            if error.code not in LOST_LEASE_CODES:
                raise
            return _lost(job_id, error.code)
        return Outcome(job_id=job_id, status=job.status, job=job)


def _run_handler(handler: Handler, leased: Lease) -> tuple[Capture, str | None]:
    """Runs the handler: (capture, None), or (None, reason) when it raised."""
    try:
        return handler(leased), None
    except Exception as error:  # noqa: BLE001 (the handler's failure is the job's, not the loop's)
        log.warning("job %s failed in its handler: %r", leased.job.job_id, error)
        reason = f"{type(error).__name__}: {error}"
        return None, reason.encode()[:MAX_REASON_BYTES].decode(errors="ignore")


def _lost(job_id: str, why: str) -> Outcome:
    log.warning("job %s: lease lost (%s); not completed, its hold is released", job_id, why)
    return Outcome(job_id=job_id, status="lease_lost", job=None)


class _Heartbeat:
    """A background thread that extends the lease every `every_seconds` while the handler
    runs, and passes on a requested cancel or a lost lease through the Lease's events."""

    def __init__(self, hf: Holdfast, leased: Lease, every_seconds: float) -> None:
        self.hf = hf
        self.leased = leased
        self.every_seconds = every_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{leased.job.job_id}", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.every_seconds):
            if not self._beat():
                return

    def _beat(self) -> bool:
        """One heartbeat; False once the lease is lost (no use beating any more)."""
        job_id = self.leased.job.job_id
        try:
            answer = self.hf.call(heartbeat, job_id=job_id, lease_token=self.leased.token)
        except HoldfastError as error:
            if error.code in LOST_LEASE_CODES:
                self.leased.lost.set()
                return False
            log.warning("job %s: heartbeat refused: %s", job_id, error)
            return True
        except httpx.HTTPError as error:  # retries ran out; the lease may still hold
            log.warning("job %s: heartbeat failed: %r", job_id, error)
            return True
        if answer.cancel_requested:
            self.leased.cancel_requested.set()
        return True
