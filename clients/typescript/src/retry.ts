// Retries below openapi-fetch: the request (and so its body, with its idempotency key) is
// built once per logical call, and each attempt re-sends a copy of it. That is what makes a
// retry after a lost answer a replay on the server instead of a second charge.

export interface RetryOptions {
  /** Attempts in all, the first included (default 4). */
  maxAttempts?: number;
  /** Back-off before the second attempt, doubled for each later one (default 200 ms). */
  baseDelayMs?: number;
  /** No single wait is longer than this, `Retry-After` included (default 5000 ms). */
  maxDelayMs?: number;
  /** Time limit of one attempt (default 20 s; a lease gets 50 s, see `attemptTimeoutMs`). */
  timeoutMs?: number;
}

type Fetch = (request: Request) => Promise<Response>;

/** Answers that say the request was not processed and may be sent again after a pause. */
const RETRIED_STATUSES = new Set([429, 503]);

/**
 * A fetch that retries a 503 or a 429 `rate_limited` (honouring `Retry-After`; neither was
 * processed) and a network error or time-out, with exponential back-off and full jitter, at
 * most `maxAttempts` times. Any other answer — a success or a 4xx refusal — is returned as it
 * is, never retried. An abort by the caller's
 * own signal is not retried either. Every holdfast call is safe to repeat: the money calls and
 * submits by their idempotency key, the others by nature (docs/API.md "Idempotency").
 */
export function retryingFetch(options: RetryOptions = {}, baseFetch: Fetch = globalThis.fetch): Fetch {
  const maxAttempts = options.maxAttempts ?? 4;
  return async (request) => {
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= maxAttempts;
      let response: Response;
      try {
        response = await baseFetch(withTimeout(request.clone(), attemptTimeoutMs(request, options)));
      } catch (error) {
        if (last || request.signal.aborted) throw error;
        await sleep(backoffMs(attempt, options));
        continue;
      }
      if (!RETRIED_STATUSES.has(response.status) || last) return response;
      await response.body?.cancel(); // free the connection before waiting
      await sleep(retryAfterMs(response, options) ?? backoffMs(attempt, options));
    }
  };
}

/**
 * The server bounds every request at 15 s and a lease at 45 s (it may wait 30 s for a job);
 * an attempt is given a little longer, so the server's own 503 answers first.
 */
function attemptTimeoutMs(request: Request, options: RetryOptions): number {
  const isLease = request.method === "POST" && /\/v1\/lanes\/[^/]+\/lease$/.test(new URL(request.url).pathname);
  return isLease ? Math.max(options.timeoutMs ?? 0, 50_000) : (options.timeoutMs ?? 20_000);
}

/** A copy of the request that also aborts after `timeoutMs`, keeping the caller's signal. */
function withTimeout(request: Request, timeoutMs: number): Request {
  const signal = AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]);
  return new Request(request, { signal });
}

/** Full jitter: a random wait in [0, base · 2^(attempt−1)], capped (AWS's "full jitter"). */
export function backoffMs(attempt: number, options: RetryOptions): number {
  const ceiling = Math.min(options.maxDelayMs ?? 5000, (options.baseDelayMs ?? 200) * 2 ** (attempt - 1));
  return Math.random() * ceiling;
}

/** `Retry-After` as seconds or an HTTP date, capped at `maxDelayMs`; undefined when absent or unreadable. */
export function retryAfterMs(response: Response, options: RetryOptions): number | undefined {
  const header = response.headers.get("retry-after");
  if (header === null) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(ms, 0), options.maxDelayMs ?? 5000);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
