// @holdfast/client: the generated types and openapi-fetch client, and the hand-written
// helpers a generator cannot know (idempotency keys, retries, the worker loop, webhooks).

export {
  type Account,
  Holdfast,
  type HoldfastOptions,
  type Job,
  type Keyed,
  type Lease,
  type LedgerEntry,
  type MoneyResult,
  type Schemas,
  type SubmitBody,
  withKey,
} from "./client.ts";
export { HoldfastError, isHoldfastError, unwrap } from "./errors.ts";
export type { components, operations, paths } from "./generated/openapi.ts";
export { backoffMs, type RetryOptions, retryAfterMs, retryingFetch } from "./retry.ts";
export { type HoldfastEvent, verifyWebhook, type WebhookHeaders, WebhookVerificationError } from "./webhooks.ts";
export {
  CancelRequested,
  type HandlerResult,
  type JobContext,
  LeaseLost,
  type Outcome,
  runWorker,
  workLeased,
  type WorkerOptions,
  workOnce,
} from "./worker.ts";
