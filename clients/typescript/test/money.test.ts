// Accounts, money and submits against a real server: balances, idempotent submits,
// typed refusals that change nothing, and a retry after a lost answer.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Holdfast, HoldfastError, isHoldfastError, unwrap } from "../src/index.ts";
import { startDroppingProxy } from "./support/proxy.ts";
import { type TestServer, startServer } from "./support/server.ts";

let server: TestServer;
let hf: Holdfast;

before(async () => {
  server = await startServer();
  hf = new Holdfast({ baseUrl: server.url, apiKey: server.serviceKey });
});
after(() => server?.stop());

test("an account, a top-up and its balance", async () => {
  const created = await hf.putAccount("acme", { plan: "free" });
  assert.equal(created.balance_micros, 0);
  const { entry, account } = await hf.topUp("acme", { amount: "10.00" });
  assert.equal(entry.kind, "top_up");
  assert.equal(entry.delta_micros, 10_000_000);
  assert.equal(account.balance, "10.00");
  const fetched = await hf.getAccount("acme");
  assert.equal(fetched.balance_micros, 10_000_000);
  assert.equal(fetched.available_micros, 10_000_000);
  assert.equal(fetched.total_credited_micros, 10_000_000);
});

test("the same logical submit twice makes one job and one hold", async () => {
  await hf.putAccount("clicker", { plan: "free" });
  await hf.topUp("clicker", { amount: "2.00" });
  const click = { account_id: "clicker", kind: "video", payload: { prompt: "a cat" }, idempotency_key: "click-1" };
  const first = await hf.submitJob(click);
  const second = await hf.submitJob(click);
  assert.equal(second.job_id, first.job_id);
  assert.deepEqual(second.payload, { prompt: "a cat" });
  const account = await hf.getAccount("clicker");
  assert.equal(account.held_micros, 500_000, "one video hold of 0.50");
  assert.equal(account.open_jobs, 1);
  assert.equal(account.balance_micros, 2_000_000, "a hold is not a charge");
});

test("a submit without a key gets a fresh one: two calls are two jobs", async () => {
  await hf.putAccount("twice", { plan: "free", max_concurrent_jobs: 2 });
  await hf.topUp("twice", { amount: "2.00" });
  const a = await hf.submitJob({ account_id: "twice", kind: "video" });
  const b = await hf.submitJob({ account_id: "twice", kind: "video" });
  assert.notEqual(a.job_id, b.job_id);
  assert.equal((await hf.getAccount("twice")).held_micros, 1_000_000);
});

test("a refusal throws the typed error with its code and changes nothing", async () => {
  await hf.putAccount("broke", { plan: "free" });
  const before = await hf.getAccount("broke");
  const ledgerBefore = await hf.ledger("broke");
  await assert.rejects(
    hf.submitJob({ account_id: "broke", kind: "video", idempotency_key: "no-money" }),
    (error: unknown) => {
      assert.ok(error instanceof HoldfastError);
      assert.equal(error.status, 402);
      assert.equal(error.code, "insufficient_funds");
      assert.match(error.serverMessage, /money/);
      return true;
    },
  );
  const after = await hf.getAccount("broke");
  for (const field of ["balance_micros", "held_micros", "open_jobs", "total_spent_micros"] as const) {
    assert.equal(after[field], before[field], field);
  }
  assert.deepEqual((await hf.ledger("broke")).entries, ledgerBefore.entries);
  // Refusals are not stored: the same key goes through once the cause is gone.
  await hf.topUp("broke", { amount: "1.00" });
  const job = await hf.submitJob({ account_id: "broke", kind: "video", idempotency_key: "no-money" });
  assert.equal(job.status, "queued");
});

test("other refusals: unknown meter, busy, a malformed amount, a missing account", async () => {
  await hf.putAccount("refused", { plan: "free" });
  await hf.topUp("refused", { amount: "1.00" });
  const codeOf = (call: Promise<unknown>) =>
    call.then(
      () => assert.fail("expected a refusal"),
      (error: unknown) => (isHoldfastError(error) ? `${error.status} ${error.code}` : String(error)),
    );
  assert.equal(await codeOf(hf.debit("refused", { usage: { meter: "quantum", seconds: 1 } })), "422 unknown_meter");
  assert.equal(await codeOf(hf.debit("refused", { amount: "0.1234567" })), "422 invalid_request");
  assert.equal(await codeOf(hf.getAccount("nobody")), "404 account_not_found");
  await hf.submitJob({ account_id: "refused", kind: "video" });
  assert.equal(await codeOf(hf.submitJob({ account_id: "refused", kind: "video" })), "409 busy");
  const account = await hf.getAccount("refused");
  assert.equal(account.balance_micros, 1_000_000);
  assert.equal(account.open_jobs, 1);
});

test("a statement and usage by meter: what was spent, on what, for how long", async () => {
  await hf.putAccount("runner", { plan: "free" });
  await hf.topUp("runner", { amount: "5.00" });
  const metered = await hf.debit("runner", { usage: { meter: "linux-small", seconds: 90 } });
  const plain = await hf.debit("runner", { amount: "0.25" });
  assert.deepEqual([metered.entry.meter, metered.entry.seconds], ["linux-small", 90]);
  assert.equal(plain.entry.meter, undefined);
  const statement = await hf.statement("runner");
  assert.equal(statement.opening_balance, "0.00");
  assert.equal(statement.closing_balance_micros, 5_000_000 - 9_000 - 250_000);
  assert.deepEqual(
    statement.spending_by_meter.map((l) => [l.meter, l.entries, l.seconds, l.amount_micros]),
    [
      ["linux-small", 1, 90, 9_000],
      [null, 1, 0, 250_000],
    ],
  );
  const admin = new Holdfast({ baseUrl: server.url, apiKey: server.adminKey });
  const usage = await admin.usage({ group_by: "meter", account_id: "runner" });
  assert.equal(usage.group_by, "meter");
  assert.deepEqual(
    usage.groups.map((g) => [g.key, g.seconds, g.spent_micros]),
    [
      ["linux-small", 90, 9_000],
      [null, 0, 250_000],
    ],
  );
  await assert.rejects(hf.usage(), (e: unknown) => isHoldfastError(e) && e.status === 403);
});

test("the balance at a time: as it stood then, whatever came after", async () => {
  await hf.putAccount("past", { plan: "free" });
  await hf.topUp("past", { amount: "5.00" });
  const before = await hf.balanceAt("past");
  await new Promise((resolve) => setTimeout(resolve, 5)); // past SQLite's millisecond clock
  await hf.debit("past", { amount: "0.25" });
  const now = await hf.balanceAt("past");
  const then = await hf.balanceAt("past", { at: before.at });
  assert.deepEqual([before.balance, now.balance, then.balance], ["5.00", "4.75", "5.00"]);
  assert.equal(then.last_entry_id, before.last_entry_id);
  assert.equal(now.allowances.daily_images?.remaining, 3);
  await assert.rejects(
    hf.balanceAt("past", { at: "yesterday" }),
    (e: unknown) => isHoldfastError(e) && e.status === 422 && e.code === "invalid_request",
  );
});

test("a spend limit: set, shown, and a debit past it refused", async () => {
  const account = await hf.putAccount("limited", {
    plan: "free",
    spend: { limit: "1.00", period: "day", alerts: ["50%"] },
  });
  assert.deepEqual([account.spend?.limit, account.spend?.period, account.spend?.own], ["1.00", "day", true]);
  await hf.topUp("limited", { amount: "5.00" });
  await hf.debit("limited", { amount: "1.00" });
  await assert.rejects(
    hf.debit("limited", { amount: "0.01" }),
    (e: unknown) => isHoldfastError(e) && e.status === 402 && e.code === "spend_limit_reached",
  );
  const shown = await hf.getAccount("limited");
  assert.deepEqual([shown.spend?.spent, shown.spend?.left], ["1.00", "0.00"]);
});

test("a retry after a dropped connection re-sends the same idempotency key: one top-up", async () => {
  await hf.putAccount("flaky", { plan: "free" });
  const proxy = await startDroppingProxy(server.url, /^POST \/v1\/accounts\/flaky\/top-ups$/);
  try {
    const viaProxy = new Holdfast({ baseUrl: proxy.url, apiKey: server.serviceKey, retry: { baseDelayMs: 10 } });
    const { account } = await viaProxy.topUp("flaky", { amount: "5.00" });
    assert.equal(proxy.dropped, 1, "the first answer was dropped");
    assert.equal(account.balance_micros, 5_000_000);
    const keys = proxy.sent.join("").match(/"idempotency_key":"([^"]+)"/g) ?? [];
    assert.equal(keys.length, 2, "sent twice");
    assert.equal(keys[0], keys[1], "with the same key");
  } finally {
    await proxy.close();
  }
  const { entries } = await hf.ledger("flaky");
  const topUps = entries.filter((entry) => entry.kind === "top_up");
  assert.equal(topUps.length, 1, "exactly one top-up in the ledger");
  assert.equal((await hf.getAccount("flaky")).balance_micros, 5_000_000);
});

test("the typed client reaches every endpoint: the admin audit is clean", async () => {
  const admin = new Holdfast({ baseUrl: server.url, apiKey: server.adminKey });
  const audit = await unwrap(admin.api.GET("/v1/admin/audit"));
  assert.deepEqual({ ok: audit.ok, violations: audit.violations }, { ok: true, violations: [] });
  assert.ok(!Number.isNaN(Date.parse(audit.checked_at)), `checked_at: ${audit.checked_at}`);
});
