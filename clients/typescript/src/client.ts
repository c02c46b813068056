// The client: openapi-fetch over the generated `paths`, with the key and retries set once,
// plus one short method per call whose body carries an `idempotency_key` (the key is made
// here, once per logical call, unless the caller gives one) and the calls the worker loop needs.

import createClient, { type Client } from "openapi-fetch";
import { unwrap } from "./errors.ts";
import type { components, paths } from "./generated/openapi.ts";
import { type RetryOptions, retryingFetch } from "./retry.ts";

export type Schemas = components["schemas"];
export type Account = Schemas["AccountBody"];
export type Job = Schemas["JobBody"];
export type LedgerEntry = Schemas["LedgerEntryBody"];
export type MoneyResult = Schemas["MoneyResultBody"];
export type Lease = Schemas["LeaseBody"];

/**
 * A request body whose `idempotency_key` may be left out: the client then makes one. It
 * distributes over a union (a debit is `amount` or `usage`), which a plain Omit would merge.
 */
export type Keyed<T extends { idempotency_key: string }> = T extends unknown
  ? Omit<T, "idempotency_key"> & { idempotency_key?: string }
  : never;

export type SubmitBody = Keyed<Schemas["SubmitRequest"]>;
export type UsageQuery = NonNullable<paths["/v1/usage"]["get"]["parameters"]["query"]>;

export interface HoldfastOptions {
  /** e.g. `http://127.0.0.1:8080` (no `/v1`). */
  baseUrl: string;
  /** An `hf_…` key of the role the calls need (service, worker or admin). */
  apiKey: string;
  retry?: RetryOptions;
  /** The fetch under the retries (default: the global one); for tests and proxies. */
  fetch?: (request: Request) => Promise<Response>;
}

/** The same body with its idempotency key: the given one, else a fresh UUID. */
export function withKey<T extends { idempotency_key?: string }>(body: T): T & { idempotency_key: string } {
  return { ...body, idempotency_key: body.idempotency_key ?? crypto.randomUUID() };
}

export class Holdfast {
  /** The typed openapi-fetch client, for every call without a helper: `unwrap(hf.api.GET(…))`. */
  readonly api: Client<paths>;

  constructor(options: HoldfastOptions) {
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      headers: { Authorization: `Bearer ${options.apiKey}` },
      fetch: retryingFetch(options.retry, options.fetch),
    });
  }

  // Accounts ---------------------------------------------------------------------------

  // `spend` without a limit has a null-only `limit`, which openapi-fetch's body type turns
  // into `never` (as a debit's `usage`, below): checked against the generated type, passed
  // `as never`.
  putAccount(accountId: string, body: Schemas["PutAccountRequest"]): Promise<Account> {
    const path = { account_id: accountId };
    return unwrap(this.api.PUT("/v1/accounts/{account_id}", { params: { path }, body: body as never }));
  }

  getAccount(accountId: string): Promise<Account> {
    return unwrap(this.api.GET("/v1/accounts/{account_id}", { params: { path: { account_id: accountId } } }));
  }

  /** One page of the account's ledger, oldest first (`after`: the previous page's `next`). */
  ledger(accountId: string, query: { after?: string; limit?: number } = {}): Promise<Schemas["LedgerPage"]> {
    return unwrap(
      this.api.GET("/v1/accounts/{account_id}/ledger", { params: { path: { account_id: accountId }, query } }),
    );
  }

  // Money: every call carries an idempotency key --------------------------------------

  topUp(accountId: string, body: Keyed<Schemas["TopUpRequest"]>): Promise<MoneyResult> {
    const path = { account_id: accountId };
    return unwrap(this.api.POST("/v1/accounts/{account_id}/top-ups", { params: { path }, body: withKey(body) }));
  }

  // A debit is `amount` or `usage`, the other absent or null. openapi-fetch's body type turns a
  // null-only field into `never`, so it refuses the `usage: null` the document allows: the
  // parameter is checked against the generated type, and the body is passed `as never`.

  debit(accountId: string, body: Keyed<Schemas["DebitRequest"]>): Promise<MoneyResult> {
    const path = { account_id: accountId };
    return unwrap(this.api.POST("/v1/accounts/{account_id}/debits", { params: { path }, body: withKey(body) as never }));
  }

  /** Batch ingest: each item answers in its place (`results[i].status`); one key per item. */
  debitBatch(debits: Keyed<Schemas["DebitItem"]>[]): Promise<Schemas["DebitBatchResults"]> {
    return unwrap(this.api.POST("/v1/debits", { body: { debits: debits.map(withKey) as never } }));
  }

  refund(accountId: string, body: Keyed<Schemas["RefundRequest"]>): Promise<MoneyResult> {
    const path = { account_id: accountId };
    return unwrap(this.api.POST("/v1/accounts/{account_id}/refunds", { params: { path }, body: withKey(body) }));
  }

  grant(accountId: string, body: Keyed<Schemas["GrantRequest"]>): Promise<MoneyResult> {
    const path = { account_id: accountId };
    return unwrap(this.api.POST("/v1/accounts/{account_id}/grants", { params: { path }, body: withKey(body) }));
  }

  // Jobs --------------------------------------------------------------------------------

  submitJob(body: SubmitBody): Promise<Job> {
    return unwrap(this.api.POST("/v1/jobs", { body: withKey(body) }));
  }

  getJob(jobId: string): Promise<Job> {
    return unwrap(this.api.GET("/v1/jobs/{job_id}", { params: { path: { job_id: jobId } } }));
  }

  /** 200 with the job canceled (it was queued), or 202 with `cancel_requested` (cooperative kinds). */
  cancelJob(jobId: string): Promise<Job> {
    return unwrap(this.api.POST("/v1/jobs/{job_id}/cancel", { params: { path: { job_id: jobId } }, body: {} }));
  }

  refundJob(jobId: string, body: Keyed<Schemas["JobRefundRequest"]>): Promise<Schemas["JobRefundBody"]> {
    const path = { job_id: jobId };
    return unwrap(this.api.POST("/v1/jobs/{job_id}/refund", { params: { path }, body: withKey(body) }));
  }

  // Workers (see worker.ts for the loop) ------------------------------------------------

  /** One lease, or `undefined` when nothing was leasable within `wait_ms` (204). */
  async lease(lane: string, body: Omit<Schemas["LeaseRequest"], "max_jobs">): Promise<Lease | undefined> {
    const answer = await unwrap(this.api.POST("/v1/lanes/{lane}/lease", { params: { path: { lane } }, body }));
    return answer as Lease | undefined; // without max_jobs the answer is one lease, never a batch
  }

  heartbeat(jobId: string, leaseToken: string): Promise<Schemas["HeartbeatBody"]> {
    const path = { job_id: jobId };
    return unwrap(this.api.POST("/v1/jobs/{job_id}/heartbeat", { params: { path }, body: { lease_token: leaseToken } }));
  }

  complete(jobId: string, body: Schemas["CompleteRequest"]): Promise<Job> {
    return unwrap(this.api.POST("/v1/jobs/{job_id}/complete", { params: { path: { job_id: jobId } }, body }));
  }

  fail(jobId: string, body: Schemas["FailRequest"]): Promise<Job> {
    return unwrap(this.api.POST("/v1/jobs/{job_id}/fail", { params: { path: { job_id: jobId } }, body }));
  }

  // Statements and usage ---------------------------------------------------------------

  /** The account's money over `[from, to)` (RFC 3339; the beginning and now by default). */
  statement(accountId: string, query: { from?: string; to?: string } = {}): Promise<Schemas["StatementBody"]> {
    const params = { path: { account_id: accountId }, query };
    // JSON: the CSV form answers only `Accept: text/csv`, which this client never sends.
    const answer = unwrap(this.api.GET("/v1/accounts/{account_id}/statement", { params }));
    return answer as Promise<Schemas["StatementBody"]>;
  }

  /** The account's pockets as they were at `at` (RFC 3339, inclusive; now by default). */
  balanceAt(accountId: string, query: { at?: string } = {}): Promise<Schemas["BalanceAtBody"]> {
    const params = { path: { account_id: accountId }, query };
    return unwrap(this.api.GET("/v1/accounts/{account_id}/balance", { params }));
  }

  /** What accounts, job kinds or meters spent in a period (an admin or viewer key). */
  usage(query: UsageQuery = {}): Promise<Schemas["UsageBody"]> {
    return unwrap(this.api.GET("/v1/usage", { params: { query } }));
  }
}
