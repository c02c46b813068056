// The retry policy against a scripted local HTTP server (a real holdfast rarely answers 503
// on demand): what is retried, how often, and what never is.

import assert from "node:assert/strict";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import { test } from "node:test";
import { Holdfast, HoldfastError, type RetryOptions } from "../src/index.ts";

type Script = (attempt: number, req: IncomingMessage, res: ServerResponse) => void;

/** Serves `script` and returns a client of it plus the bodies received, one per attempt. */
async function scripted(script: Script, retry: RetryOptions = { baseDelayMs: 5, maxAttempts: 4 }) {
  const bodies: string[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    bodies.push(Buffer.concat(chunks).toString("utf8"));
    script(bodies.length, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const hf = new Holdfast({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "hf_test", retry });
  const close = () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
  return { hf, bodies, close };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));

const unavailable = { error: { code: "database_unavailable", message: "try again" } };
const answer = { entry: { kind: "top_up" }, account: { balance: "1.00" } };

test("a 503 is retried with the same body (same idempotency key), honouring Retry-After", async () => {
  const { hf, bodies, close } = await scripted((attempt, _req, res) =>
    attempt < 3 ? json(res, 503, unavailable, { "retry-after": "0.3" }) : json(res, 201, answer),
  );
  try {
    const started = Date.now();
    const result = await hf.topUp("acme", { amount: "1.00" });
    assert.equal(result.account.balance, "1.00");
    assert.equal(bodies.length, 3);
    assert.ok(Date.now() - started >= 550, "waited Retry-After twice");
    const keys = bodies.map((body) => JSON.parse(body).idempotency_key);
    assert.match(keys[0], /^[0-9a-f-]{36}$/, "a UUID made by the client");
    assert.deepEqual(new Set(keys).size, 1, "one key for the logical call");
  } finally {
    await close();
  }
});

test("a 429 rate_limited is retried after its Retry-After with the same key", async () => {
  const limited = { error: { code: "rate_limited", message: "slow down" } };
  const { hf, bodies, close } = await scripted((attempt, _req, res) =>
    attempt === 1 ? json(res, 429, limited, { "retry-after": "0.3" }) : json(res, 201, answer),
  );
  try {
    const started = Date.now();
    const result = await hf.topUp("acme", { amount: "1.00" });
    assert.equal(result.account.balance, "1.00");
    assert.equal(bodies.length, 2);
    assert.ok(Date.now() - started >= 280, "waited Retry-After");
    const keys = bodies.map((body) => JSON.parse(body).idempotency_key);
    assert.equal(new Set(keys).size, 1, "one key for the logical call");
  } finally {
    await close();
  }
});

test("a 4xx is never retried and becomes a HoldfastError", async () => {
  const { hf, bodies, close } = await scripted((_attempt, _req, res) =>
    json(res, 402, { error: { code: "insufficient_funds", message: "not enough money" } }),
  );
  try {
    await assert.rejects(hf.debit("acme", { amount: "5.00", idempotency_key: "mine" }), (error: unknown) => {
      assert.ok(error instanceof HoldfastError);
      assert.equal(error.status, 402);
      assert.equal(error.code, "insufficient_funds");
      assert.equal(error.serverMessage, "not enough money");
      return true;
    });
    assert.equal(bodies.length, 1);
    assert.equal(JSON.parse(bodies[0] ?? "").idempotency_key, "mine", "a given key is kept");
  } finally {
    await close();
  }
});

test("attempts are bounded: the last 503 is the caller's error", async () => {
  const { hf, bodies, close } = await scripted((_attempt, _req, res) => json(res, 503, unavailable), {
    baseDelayMs: 5,
    maxAttempts: 3,
  });
  try {
    await assert.rejects(hf.getAccount("acme"), (error: unknown) => error instanceof HoldfastError && error.status === 503);
    assert.equal(bodies.length, 3);
  } finally {
    await close();
  }
});

test("a connection dropped before any answer is retried; a 500 is not", async () => {
  const { hf, bodies, close } = await scripted((attempt, req, res) => {
    if (attempt === 1) return void req.socket.destroy();
    json(res, 500, { error: { code: "internal_error", message: "bug" } });
  });
  try {
    await assert.rejects(
      hf.getAccount("acme"),
      (error: unknown) => error instanceof HoldfastError && error.code === "internal_error",
    );
    assert.equal(bodies.length, 2);
  } finally {
    await close();
  }
});

test("an attempt that outlasts its time limit is abandoned and retried", async () => {
  const { hf, bodies, close } = await scripted(
    (attempt, _req, res) => {
      if (attempt === 1) return; // never answers
      json(res, 200, { account_id: "acme" });
    },
    { baseDelayMs: 5, maxAttempts: 2, timeoutMs: 200 },
  );
  try {
    const account = await hf.getAccount("acme");
    assert.equal(account.account_id, "acme");
    assert.equal(bodies.length, 2);
  } finally {
    await close();
  }
});
