// The one error type of this client: an HTTP answer that was not a success.

/** A refusal or failure answered by holdfast: the HTTP status and the API's stable `error.code`. */
export class HoldfastError extends Error {
  readonly status: number;
  /** A stable code of docs/API.md (`insufficient_funds`, `lease_lost`, …); `http_<status>` when the body had none. */
  readonly code: string;
  /** The server's human text; it may change between versions, so branch on `code`. */
  readonly serverMessage: string;

  constructor(status: number, code: string, serverMessage: string) {
    super(`${status} ${code}: ${serverMessage}`);
    this.name = "HoldfastError";
    this.status = status;
    this.code = code;
    this.serverMessage = serverMessage;
  }
}

/** True when `error` is a HoldfastError with this code, e.g. `isHoldfastError(e, "lease_lost")`. */
export function isHoldfastError(error: unknown, code?: string): error is HoldfastError {
  return error instanceof HoldfastError && (code === undefined || error.code === code);
}

/** What openapi-fetch resolves to: `data` on success, `error` (the parsed body) otherwise. */
interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * Turns an openapi-fetch result into its data, or throws a HoldfastError built from the
 * `{"error": {"code", "message"}}` body. A 204 gives `undefined`.
 */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  const detail = errorDetail(error);
  throw new HoldfastError(
    response.status,
    detail?.code ?? `http_${response.status}`,
    detail?.message ?? response.statusText,
  );
}

function errorDetail(body: unknown): { code: string; message: string } | undefined {
  if (typeof body !== "object" || body === null || !("error" in body)) return undefined;
  const detail: unknown = body.error;
  if (typeof detail !== "object" || detail === null) return undefined;
  const { code, message } = detail as Record<string, unknown>;
  return typeof code === "string" ? { code, message: String(message ?? "") } : undefined;
}
