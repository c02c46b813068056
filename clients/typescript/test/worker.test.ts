// The worker loop against a real server: heartbeats keep a lease shorter than the handler
// alive, a cooperative cancel reaches the handler, a lost lease is reported.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { CancelRequested, Holdfast, type HoldfastError, type Job, LeaseLost, unwrap, workOnce } from "../src/index.ts";
import { type TestServer, defaultRateCard, startServer, until } from "./support/server.ts";

let server: TestServer;
let service: Holdfast;
let admin: Holdfast;

before(async () => {
  // Only the tests sweep (POST /v1/admin/sweep), so they know when a lapsed lease is swept.
  const card = (await defaultRateCard()).replace(/^sweep_every_seconds = \d+/m, "sweep_every_seconds = 3600");
  assert.match(card, /sweep_every_seconds = 3600/);
  server = await startServer({ rateCard: card });
  service = new Holdfast({ baseUrl: server.url, apiKey: server.serviceKey });
  admin = new Holdfast({ baseUrl: server.url, apiKey: server.adminKey });
});
after(() => server?.stop());

/** A worker client whose fetch counts heartbeats and can be made to lose them. */
function countingWorker() {
  const stats = { heartbeats: 0, blockHeartbeats: false };
  const worker = new Holdfast({
    baseUrl: server.url,
    apiKey: server.workerKey,
    retry: { maxAttempts: 2, baseDelayMs: 20 },
    fetch: async (request) => {
      if (request.url.endsWith("/heartbeat")) {
        if (stats.blockHeartbeats) throw new TypeError("fetch failed (blocked by the test)");
        stats.heartbeats += 1;
      }
      return fetch(request);
    },
  });
  return { worker, stats };
}

async function fundedVideoJob(accountId: string): Promise<Job> {
  await service.putAccount(accountId, { plan: "free" });
  await service.topUp(accountId, { amount: "10.00" });
  return service.submitJob({ account_id: accountId, kind: "video", payload: { frames: 24 } });
}

test("heartbeats keep a lease shorter than the handler alive; the capture is in the ledger", async () => {
  const submitted = await fundedVideoJob("render");
  const { worker, stats } = countingWorker();
  let sweptWhileRunning = -1;
  const outcome = await workOnce(worker, {
    lane: "video",
    workerId: "w-render",
    leaseSeconds: 1,
    waitMs: 2000,
    handler: async ({ job, signal }) => {
      assert.equal(job.job_id, submitted.job_id);
      await sleep(1800); // longer than the lease
      sweptWhileRunning = (await unwrap(admin.api.POST("/v1/admin/sweep", { body: {} }))).processed;
      await sleep(1000);
      assert.equal(signal.aborted, false);
      return { capture: [{ pocket: "money", amount: "0.30" }] };
    },
  });
  assert.ok(outcome);
  assert.equal(outcome.status, "completed");
  assert.equal(outcome.job.status, "succeeded");
  assert.equal(sweptWhileRunning, 0, "the sweeper found no lapsed lease");
  assert.ok(stats.heartbeats >= 5, `heartbeats every third of the lease (${stats.heartbeats})`);
  assert.deepEqual(outcome.job.charged.map((line) => [line.pocket, line.amount_micros]), [["money", 300_000]]);
  const account = await service.getAccount("render");
  assert.equal(account.balance_micros, 9_700_000);
  assert.equal(account.held_micros, 0, "the rest of the hold is released");
  const captures = (await service.ledger("render")).entries.filter((entry) => entry.kind === "capture");
  assert.deepEqual(captures.map((entry) => [entry.ref, entry.delta_micros]), [[submitted.job_id, -300_000]]);
});

test("a cooperative cancel reaches the handler, which ends the job canceled with a partial capture", async () => {
  const submitted = await fundedVideoJob("impatient");
  const { worker } = countingWorker();
  let reason: unknown;
  const working = workOnce(worker, {
    lane: "video",
    workerId: "w-cancel",
    leaseSeconds: 2,
    handler: async ({ signal }) => {
      await sleep(15_000, undefined, { signal }).catch(() => {}); // until aborted
      reason = signal.reason;
      return { capture: [{ pocket: "money", amount: "0.10" }] };
    },
  });
  await until("the job to be leased", async () => (await service.getJob(submitted.job_id)).status === "in_progress");
  const requested = await service.cancelJob(submitted.job_id);
  assert.equal(requested.cancel_requested, true);
  const outcome = await working;
  assert.ok(reason instanceof CancelRequested, "the signal says a cancel was requested");
  assert.ok(outcome);
  assert.equal(outcome.status, "completed");
  assert.equal(outcome.job.status, "canceled");
  assert.equal(outcome.job.charged[0]?.amount_micros, 100_000);
  const account = await service.getAccount("impatient");
  assert.equal(account.balance_micros, 9_900_000);
  assert.equal(account.held_micros, 0);
});

test("a lost lease stops the heartbeats, aborts the handler and is reported; nothing is charged", async () => {
  const submitted = await fundedVideoJob("lapsed");
  const { worker, stats } = countingWorker();
  const reported: HoldfastError[] = [];
  let reason: unknown;
  const working = workOnce(worker, {
    lane: "video",
    workerId: "w-lapse",
    leaseSeconds: 1,
    onLeaseLost: (_job, error) => reported.push(error),
    onError: () => {}, // the blocked heartbeats
    handler: async ({ signal }) => {
      stats.blockHeartbeats = true; // the network to the server is gone for a while
      const leased = await service.getJob(submitted.job_id);
      await until("the lease to lapse", async () => Date.now() > Date.parse(leased.lease_expires_at ?? "") + 200);
      const swept = await unwrap(admin.api.POST("/v1/admin/sweep", { body: {} }));
      assert.equal(swept.processed, 1);
      stats.blockHeartbeats = false; // back: the next heartbeat learns the lease is gone
      await sleep(15_000, undefined, { signal }).catch(() => {}); // until aborted
      reason = signal.reason;
    },
  });
  const outcome = await working;
  assert.ok(outcome);
  assert.equal(outcome.status, "lease_lost");
  assert.equal(outcome.error.code, "lease_lost");
  assert.equal(reported.length, 1, "reported once");
  assert.ok(reason instanceof LeaseLost);
  const beatsAtEnd = stats.heartbeats;
  await sleep(800);
  assert.equal(stats.heartbeats, beatsAtEnd, "no heartbeat after the loss");
  const job = await service.getJob(submitted.job_id);
  assert.equal(job.status, "expired");
  assert.deepEqual(job.charged, []);
  const account = await service.getAccount("lapsed");
  assert.equal(account.balance_micros, 10_000_000);
  assert.equal(account.held_micros, 0);
});

test("a handler that throws fails the job: nothing charged, the reason recorded", async () => {
  const submitted = await fundedVideoJob("broken");
  const { worker } = countingWorker();
  const outcome = await workOnce(worker, {
    lane: "video",
    workerId: "w-fail",
    handler: async () => {
      throw new Error("the GPU caught fire");
    },
  });
  assert.ok(outcome);
  assert.equal(outcome.status, "failed");
  assert.equal(outcome.job.job_id, submitted.job_id);
  assert.equal(outcome.job.status, "failed");
  assert.equal(outcome.job.failure_reason, "the GPU caught fire");
  const account = await service.getAccount("broken");
  assert.equal(account.balance_micros, 10_000_000);
  assert.equal(account.held_micros, 0);
});

test("nothing to lease within wait_ms: undefined, after about that long", async () => {
  const { worker } = countingWorker();
  const started = Date.now();
  const outcome = await workOnce(worker, { lane: "image", workerId: "w-idle", waitMs: 300, handler: async () => {} });
  assert.equal(outcome, undefined);
  assert.ok(Date.now() - started >= 250, "the server waited");
});
