// End to end against a real `holdfast serve` on this example's rate card: the agent runs
// builds, the reporter bills their seconds; a lost answer to a report is retried and charged
// once; an account that runs out of money goes into its buffer, is suspended, and its
// runner is stopped; the ledger explains every debit.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, test } from "node:test";
import { Holdfast, isHoldfastError, type LedgerEntry, unwrap } from "@holdfast/client";
import { startDroppingProxy, type DroppingProxy } from "../../../clients/typescript/test/support/proxy.ts";
import { startServer, type TestServer, until } from "../../../clients/typescript/test/support/server.ts";
import { type Agent, startAgent } from "../src/agent.ts";

const PER_SECOND_MICROS = { "linux-8cpu": 400, "macos-m1": 1000 }; // as in rate-card.toml

let server: TestServer;
let proxy: DroppingProxy;
let agent: Agent;
let hf: Holdfast;
const lines: string[] = [];

before(async () => {
  const card = await readFile(new URL("../rate-card.toml", import.meta.url), "utf8");
  server = await startServer({ rateCard: card });
  // The usage reports go through a proxy that loses the answers to the first 5 batch debits:
  // the client's 4 attempts of the first report, so the reporter sends it again at the next
  // interval, and that one's first attempt, so the client retries it once more.
  proxy = await startDroppingProxy(server.url, /^POST \/v1\/debits$/, 5);
  hf = new Holdfast({ baseUrl: server.url, apiKey: server.serviceKey });
  agent = startAgent({
    baseUrl: server.url,
    usageUrl: proxy.url,
    workerKey: server.workerKey,
    serviceKey: server.serviceKey,
    reportEverySeconds: 1,
    leaseSeconds: 3,
    log: (line) => lines.push(line),
  });
});
after(async () => {
  await agent?.stop();
  await proxy?.close();
  await server?.stop();
  if (process.exitCode) console.log(lines.join("\n"));
});

async function moneyLedger(accountId: string): Promise<LedgerEntry[]> {
  const { entries } = await hf.ledger(accountId, { limit: 1000 });
  return entries.filter((entry) => entry.pocket === "money");
}

async function finished(jobId: string) {
  return until(`job ${jobId} to end`, async () => {
    const job = await hf.getJob(jobId);
    return job.status !== "queued" && job.status !== "in_progress" && job;
  }, 20_000);
}

test("usage is charged exactly once per interval, even when a report is retried", async () => {
  await hf.putAccount("acme", { plan: "team" });
  await hf.topUp("acme", { amount: "10.00" });
  const job = await hf.submitJob({ account_id: "acme", kind: "ci", payload: { meter: "linux-8cpu", build_seconds: 5.5 } });
  assert.equal((await finished(job.job_id)).status, "succeeded");

  assert.equal(proxy.dropped, 5, "answers were lost");
  assert.equal(lines.filter((line) => line.startsWith("usage report failed")).length, 1, "one call failed whole");
  const reports = agent.reporter.reports.filter((report) => report.jobId === job.job_id);
  assert.ok(reports.every((r) => r.status === 200 || r.status === 201), JSON.stringify(reports));
  assert.equal(reports.filter((r) => r.status === 200).length, 1, "the retried report answered as a replay");
  assert.equal(new Set(reports.map((r) => r.idempotencyKey)).size, reports.length, "one key per interval");
  const billed = reports.reduce((sum, r) => sum + r.seconds, 0);
  assert.equal(billed, 6, "5.5 s of build: 6 started seconds");
  assert.ok(reports.length >= 3, `reported every second (${JSON.stringify(reports)})`);

  const debits = (await moneyLedger("acme")).filter((entry) => entry.kind === "debit");
  assert.deepEqual(debits.map((e) => e.entry_id).sort(), reports.map((r) => r.entryId).sort(), "one entry per report");
  assert.ok(debits.every((e) => e.ref === job.job_id));
  assert.deepEqual(
    debits.map((e) => e.delta_micros),
    reports.map((r) => -r.seconds * PER_SECOND_MICROS["linux-8cpu"]),
  );
  const account = await hf.getAccount("acme");
  assert.equal(account.balance_micros, 10_000_000 - billed * PER_SECOND_MICROS["linux-8cpu"]);
  assert.equal(account.suspended_at, null);
});

test("a runner is stopped once its account goes below zero: into the buffer, then suspended", async () => {
  await hf.putAccount("thrifty", { plan: "hobby" });
  await hf.topUp("thrifty", { amount: "0.003" }); // 3 s of macOS
  const job = await hf.submitJob({ account_id: "thrifty", kind: "ci", payload: { meter: "macos-m1", build_seconds: 60 } });
  const ended = await finished(job.job_id);
  assert.equal(ended.status, "failed");
  assert.equal(ended.failure_reason, "runner stopped: account_suspended");
  const ranSeconds = (Date.parse(ended.finished_at ?? "") - Date.parse(ended.started_at ?? "")) / 1000;
  assert.ok(ranSeconds < 10, `stopped soon after the money ran out, not after 60 s (${ranSeconds} s)`);

  const account = await hf.getAccount("thrifty");
  assert.notEqual(account.suspended_at, null, "suspended");
  assert.ok(account.balance_micros < 0, "below zero");
  assert.ok(account.balance_micros >= -account.buffer_micros, "within the buffer");

  // The ledger explains every change: a top-up, then one debit per report, chained.
  const entries = await moneyLedger("thrifty");
  assert.equal(entries[0]?.kind, "top_up");
  let balance = 0;
  for (const entry of entries) {
    balance += entry.delta_micros ?? Number.NaN;
    assert.equal(entry.amount_after_micros, balance, `entry ${entry.entry_id} follows from the one before`);
  }
  assert.equal(balance, account.balance_micros);
  const reports = agent.reporter.reports.filter((report) => report.jobId === job.job_id);
  const debits = entries.filter((entry) => entry.kind === "debit");
  assert.deepEqual(debits.map((e) => e.entry_id), reports.map((r) => r.entryId));
  assert.deepEqual(debits.map((e) => e.delta_micros), reports.map((r) => -r.seconds * PER_SECOND_MICROS["macos-m1"]));
  assert.ok(debits.every((e) => e.ref === job.job_id));

  // The debit that crossed zero is the one the suspension names.
  const { events } = await unwrap(
    hf.api.GET("/v1/events", { params: { query: { account_id: "thrifty", type: "account.suspended" } } }),
  );
  const crossing = debits.find((e) => (e.amount_after_micros ?? 0) < 0);
  assert.equal(events.length, 1);
  // String(): the event's `data.entry_id` is a JSON number, the entry's own `entry_id` a string.
  assert.equal(String((events[0]?.data as { entry_id?: unknown }).entry_id), crossing?.entry_id);

  // And the platform takes no new build from it until it pays.
  await assert.rejects(
    hf.submitJob({ account_id: "thrifty", kind: "ci", payload: { meter: "macos-m1", build_seconds: 1 } }),
    (error: unknown) => isHoldfastError(error, "account_suspended"),
  );
});

test("the books are consistent afterwards (audit)", async () => {
  const admin = new Holdfast({ baseUrl: server.url, apiKey: server.adminKey });
  const audit = await unwrap(admin.api.GET("/v1/admin/audit"));
  assert.deepEqual({ ok: audit.ok, violations: audit.violations }, { ok: true, violations: [] });
});
