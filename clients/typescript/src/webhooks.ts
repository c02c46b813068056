// Webhook verification: holdfast signs deliveries in the Standard Webhooks format
// (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`), so the
// `standardwebhooks` package verifies them; this only adapts the headers and types the event.

import { Webhook, WebhookVerificationError } from "standardwebhooks";
import type { components } from "./generated/openapi.ts";

export { WebhookVerificationError };

/** One event, as `GET /v1/events` lists it and a webhook delivers it. */
export type HoldfastEvent = components["schemas"]["EventBody"];

/** Headers as Node's `req.headers`, a fetch `Headers`, or a plain object. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/**
 * Verifies one delivery and returns its parsed event. `secret` is the endpoint's
 * `whsec_…` secret of the rate card; `body` the raw body exactly as received (verify before
 * parsing: re-serialised JSON does not match). Throws WebhookVerificationError on a missing
 * header, a bad signature, or a `webhook-timestamp` more than 5 minutes from this clock.
 * De-duplicate by `webhook-id` (the event id): delivery is at least once.
 */
export function verifyWebhook(secret: string, body: string | Buffer, headers: WebhookHeaders): HoldfastEvent {
  const wanted = ["webhook-id", "webhook-timestamp", "webhook-signature"] as const;
  const flat = Object.fromEntries(wanted.map((name) => [name, header(headers, name)]));
  return new Webhook(secret).verify(body, flat) as HoldfastEvent;
}

/** One header by its lower-case name, whatever the case of the keys given. */
function header(headers: WebhookHeaders, name: string): string {
  if (headers instanceof Headers) return headers.get(name) ?? "";
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return Array.isArray(value) ? value.join(" ") : (value ?? "");
}
