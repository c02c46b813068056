// Webhook verification: a real delivery from the server verifies with the helper (the
// `standardwebhooks` package underneath); a tampered body, a wrong secret and a stale
// timestamp do not.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import { Webhook } from "standardwebhooks";
import { Holdfast, verifyWebhook, WebhookVerificationError } from "../src/index.ts";
import { type Delivery, type Receiver, startReceiver } from "./support/receiver.ts";
import { type TestServer, defaultRateCard, startServer, until } from "./support/server.ts";

const secret = `whsec_${randomBytes(32).toString("base64")}`;
let receiver: Receiver;
let server: TestServer;
let delivery: Delivery;

before(async () => {
  receiver = await startReceiver();
  const card = `${await defaultRateCard()}\n[[webhooks]]\nurl = "${receiver.url}"\nsecret = "${secret}"\n`;
  server = await startServer({ rateCard: card });
  const hf = new Holdfast({ baseUrl: server.url, apiKey: server.serviceKey });
  await hf.putAccount("hooked", { plan: "free" });
  const job = await hf.submitJob({ account_id: "hooked", kind: "image", payload: { prompt: "a fox" } });
  await hf.cancelJob(job.job_id); // a queued job: canceled at once, event job.canceled
  delivery = await until(
    "the job.canceled delivery",
    async () => receiver.deliveries.find((d) => d.body.includes('"job.canceled"')),
    15_000,
  );
});
after(async () => {
  await server?.stop();
  await receiver?.close();
});

test("a real delivery verifies and gives the parsed event", () => {
  assert.ok(delivery.headers["webhook-signature"], "the server sends a Standard Webhooks `webhook-signature` header");
  const event = verifyWebhook(secret, delivery.body, delivery.headers);
  assert.deepEqual(event, JSON.parse(delivery.body));
  assert.equal(event.type, "job.canceled");
  assert.equal(event.account_id, "hooked");
  assert.equal(delivery.headers["webhook-id"], event.event_id, "webhook-id is the event id");
  // Headers as a fetch Headers object work the same.
  const headers = new Headers(Object.entries(delivery.headers).map(([k, v]) => [k, String(v)]));
  assert.equal(verifyWebhook(secret, Buffer.from(delivery.body), headers).event_id, event.event_id);
});

test("a tampered body, a wrong secret or a missing header does not verify", () => {
  assert.doesNotThrow(() => verifyWebhook(secret, delivery.body, delivery.headers), "the delivery as sent verifies");
  const tampered = delivery.body.replace('"hooked"', '"hacked"');
  assert.notEqual(tampered, delivery.body);
  assert.throws(() => verifyWebhook(secret, tampered, delivery.headers), WebhookVerificationError);
  const otherSecret = `whsec_${randomBytes(32).toString("base64")}`;
  assert.throws(() => verifyWebhook(otherSecret, delivery.body, delivery.headers), WebhookVerificationError);
  const { "webhook-signature": _, ...unsigned } = delivery.headers;
  assert.throws(() => verifyWebhook(secret, delivery.body, unsigned), WebhookVerificationError);
});

test("a timestamp more than 5 minutes off does not verify, even correctly signed", () => {
  const signer = new Webhook(secret);
  const signedAt = (date: Date) => ({
    "webhook-id": "42",
    "webhook-timestamp": String(Math.floor(date.getTime() / 1000)),
    "webhook-signature": signer.sign("42", date, delivery.body),
  });
  const now = Date.now();
  assert.equal(verifyWebhook(secret, delivery.body, signedAt(new Date(now - 60_000))).type, "job.canceled");
  assert.throws(() => verifyWebhook(secret, delivery.body, signedAt(new Date(now - 6 * 60_000))), /too old/);
  assert.throws(() => verifyWebhook(secret, delivery.body, signedAt(new Date(now + 6 * 60_000))), /too new/);
});
