// The worker loop of docs/API.md "Workers": lease from a lane (waiting up to `wait_ms`), run
// the handler while a background task heartbeats at a third of the lease, then complete
// (optionally with a capture) or fail. A heartbeat that answers `cancel_requested` aborts the
// handler's signal (cooperative cancel: the handler returns what it did, and that partial
// capture ends the job `canceled`); a heartbeat that answers `lease_lost` stops the
// heartbeats, aborts the signal and is reported — the job is then no longer ours to finish.

import { setTimeout as sleep } from "node:timers/promises";
import type { Holdfast, Job, Lease, Schemas } from "./client.ts";
import { HoldfastError, isHoldfastError } from "./errors.ts";

/** The reason of the handler's signal when a cancel was requested. */
export class CancelRequested extends Error {
  override name = "CancelRequested";
}

/** The reason of the handler's signal when the lease was lost (swept, or another token). */
export class LeaseLost extends Error {
  override name = "LeaseLost";
}

export interface JobContext {
  job: Job;
  leaseToken: string;
  /** Aborted with a CancelRequested or a LeaseLost reason: stop soon and return. */
  signal: AbortSignal;
}

/** What the handler returns: the capture for `complete` (absent: the whole hold). Throw to fail the job. */
export type HandlerResult = { capture?: Schemas["CaptureLine"][] } | void;

export interface WorkerOptions {
  lane: string;
  workerId: string;
  handler: (context: JobContext) => Promise<HandlerResult>;
  /** Lease length asked for (default: the rate card's `lease_seconds`). */
  leaseSeconds?: number;
  /** How long one lease call waits for a job (default 5000 ms, at most 30000). */
  waitMs?: number;
  /** Called once when a lease is lost while the handler runs. */
  onLeaseLost?: (job: Job, error: HoldfastError) => void;
  /** Called for errors the loop survives: a heartbeat that failed after its retries, a failed lease. */
  onError?: (error: unknown) => void;
}

export type Outcome =
  | { status: "completed"; job: Job } // `succeeded`, or `canceled` after a cooperative cancel
  | { status: "failed"; job: Job; error: unknown } // the handler threw; the job is `failed`
  | { status: "lease_lost"; job: Job; error: HoldfastError }; // not finished by us

/** Leases one job and works it; `undefined` when nothing came within `waitMs`. */
export async function workOnce(hf: Holdfast, options: WorkerOptions): Promise<Outcome | undefined> {
  const lease = await hf.lease(options.lane, {
    worker_id: options.workerId,
    lease_seconds: options.leaseSeconds ?? null,
    wait_ms: options.waitMs ?? 5000,
  });
  return lease && (await workLeased(hf, lease, options));
}

/**
 * Works jobs until `signal` aborts. A lease call in flight is let finish (aborting it could
 * lose a job the server already handed out), so stopping takes up to `waitMs` plus the job.
 */
export async function runWorker(hf: Holdfast, options: WorkerOptions & { signal: AbortSignal }): Promise<void> {
  for (let failures = 0; !options.signal.aborted; ) {
    try {
      await workOnce(hf, options);
      failures = 0;
    } catch (error) {
      options.onError?.(error);
      failures = Math.min(failures + 1, 6);
      await sleep(250 * 2 ** failures).catch(() => undefined);
    }
  }
}

/** Runs the handler under heartbeats, then finishes the job as the handler's result says. */
export async function workLeased(hf: Holdfast, lease: Lease, options: WorkerOptions): Promise<Outcome> {
  const { job, lease_token: leaseToken } = lease;
  const control = new AbortController();
  let lost: HoldfastError | undefined;
  const heartbeat = startHeartbeat(hf, lease, options, {
    onCancel: () => control.abort(new CancelRequested("a cancel was requested")),
    onLost: (error) => {
      lost = error;
      control.abort(new LeaseLost(error.serverMessage));
      options.onLeaseLost?.(job, error);
    },
  });
  let result: { ok: true; value: HandlerResult } | { ok: false; error: unknown };
  try {
    result = { ok: true, value: await options.handler({ job, leaseToken, signal: control.signal }) };
  } catch (error) {
    result = { ok: false, error };
  }
  await heartbeat.stop();
  if (lost) return { status: "lease_lost", job, error: lost };
  return finish(hf, lease, result);
}

async function finish(
  hf: Holdfast,
  lease: Lease,
  result: { ok: true; value: HandlerResult } | { ok: false; error: unknown },
): Promise<Outcome> {
  const { job, lease_token } = lease;
  try {
    if (result.ok) {
      const capture = result.value?.capture;
      return { status: "completed", job: await hf.complete(job.job_id, { lease_token, capture }) };
    }
    const failed = await hf.fail(job.job_id, { lease_token, reason: failureReason(result.error) });
    return { status: "failed", job: failed, error: result.error };
  } catch (error) {
    if (isHoldfastError(error, "lease_lost")) return { status: "lease_lost", job, error };
    throw error;
  }
}

interface HeartbeatEvents {
  onCancel: () => void;
  onLost: (error: HoldfastError) => void;
}

/**
 * Heartbeats every third of the lease until stopped or the lease is lost. The lease length
 * is read from the server's own clock (`lease_expires_at − started_at`), so a skewed local
 * clock does not matter. `stop()` waits for a heartbeat in flight, so none races `complete`.
 */
function startHeartbeat(hf: Holdfast, lease: Lease, options: WorkerOptions, events: HeartbeatEvents) {
  const stopped = new AbortController();
  const everyMs = heartbeatEveryMs(lease, options.leaseSeconds);
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      const slept = await sleep(everyMs, true, { signal: stopped.signal }).catch(() => false);
      if (!slept) return;
      try {
        const answer = await hf.heartbeat(lease.job.job_id, lease.lease_token);
        if (answer.cancel_requested) events.onCancel();
      } catch (error) {
        if (isHoldfastError(error, "lease_lost")) return events.onLost(error);
        options.onError?.(error); // 503s and lost connections already retried; try at the next beat
      }
    }
  })();
  return {
    stop: async () => {
      stopped.abort();
      await loop;
    },
  };
}

function heartbeatEveryMs(lease: Lease, leaseSeconds: number | undefined): number {
  const startedAt = Date.parse(lease.job.started_at ?? "");
  const leaseMs = Date.parse(lease.lease_expires_at) - startedAt;
  const fromServer = Number.isFinite(leaseMs) && leaseMs > 0 ? leaseMs : (leaseSeconds ?? 60) * 1000;
  return Math.max(fromServer / 3, 100);
}

/** The handler's error as a `reason` (the server keeps at most 4096 bytes). */
function failureReason(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : String(error);
  return text.slice(0, 1000);
}
