/** How the client waits out a 429 or 503 before giving the answer back. */
export interface RetryOptions {
  /** Further attempts after the first (default 2); 0 hands every refusal straight back. */
  retries?: number;
  /** The longest wait the client accepts (default 30 s): a refusal asking for more is handed back at once. */
  maxDelayMs?: number;
  /** The wait when the answer names none (default 1 s). */
  defaultDelayMs?: number;
}

const RETRIED = new Set([429, 503]);

/** `Retry-After` as seconds or as an HTTP date, in milliseconds from `now`. */
function retryAfterMs(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The IETF `RateLimit` field (`"key";r=0;t=12, "ip";r=40;t=12`): the longest reset among the
 * exhausted policies, since every one of them must have room again.
 */
function rateLimitResetMs(value: string | null): number | undefined {
  if (!value) return undefined;
  let wait: number | undefined;
  for (const item of value.split(',')) {
    const remaining = /;\s*r=(\d+)/.exec(item);
    const reset = /;\s*t=(\d+)/.exec(item);
    if (remaining && reset && Number(remaining[1]) === 0) wait = Math.max(wait ?? 0, Number(reset[1]) * 1000);
  }
  return wait;
}

/** The wait a refusal asks for: `Retry-After` first, then the `RateLimit` field, then the default. */
export function requestedDelayMs(response: Response, defaultDelayMs: number, now = Date.now()): number {
  return retryAfterMs(response.headers.get('retry-after'), now) ?? rateLimitResetMs(response.headers.get('ratelimit')) ?? defaultDelayMs;
}

/**
 * A `fetch` that answers a 429/503 by waiting what the server asked and sending the request again,
 * a bounded number of times. It wraps `fetch` rather than being an openapi-fetch middleware because
 * a middleware sees the request after its body was sent, and a body cannot be sent twice: here
 * each attempt gets its own clone.
 */
export function retryingFetch(base: (request: Request) => Promise<Response>, options: RetryOptions = {}) {
  const retries = options.retries ?? 2;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const defaultDelayMs = options.defaultDelayMs ?? 1_000;
  return async (request: Request): Promise<Response> => {
    for (let attempt = 0; ; attempt++) {
      const response = await base(attempt < retries ? request.clone() : request);
      if (!RETRIED.has(response.status) || attempt >= retries) return response;
      const delay = requestedDelayMs(response, defaultDelayMs);
      if (delay > maxDelayMs) return response;
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  };
}
