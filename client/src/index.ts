import createClient, { type Client } from 'openapi-fetch';
import type { paths as PublicPaths } from './public.d.ts';
import type { paths as ManagementPaths } from './management.d.ts';
import { retryingFetch, type RetryOptions } from './retry.ts';

export type { PublicPaths, ManagementPaths, RetryOptions };
export type { components as PublicComponents, operations as PublicOperations } from './public.d.ts';
export type { components as ManagementComponents, operations as ManagementOperations } from './management.d.ts';
export { pages, ClientError, type PagedBody, type CallResult } from './pages.ts';
export { requestedDelayMs } from './retry.ts';

export interface ClientOptions {
  /** The service's origin as the workspace's site answers it, e.g. `https://example.com` (no path). */
  baseUrl: string;
  /** How 429 and 503 answers are waited out (`Retry-After`, then `RateLimit`). */
  retry?: RetryOptions;
  /** The `fetch` to send with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

const origin = (baseUrl: string) => baseUrl.replace(/\/+$/, '');

const fetchWithRetry = (options: ClientOptions) => retryingFetch(options.fetch ?? ((request) => globalThis.fetch(request)), options.retry);

/** The Public Content API (`/api/v1`): published content, anonymous. */
export function createPublicClient(options: ClientOptions): Client<PublicPaths> {
  return createClient<PublicPaths>({ baseUrl: `${origin(options.baseUrl)}/api/v1`, fetch: fetchWithRetry(options) });
}

/** The Management API (`/api/manage/v1`) with an API key (`svk_…`) as the bearer. */
export function createManagementClient(options: ClientOptions & { apiKey: string }): Client<ManagementPaths> {
  return createClient<ManagementPaths>({
    baseUrl: `${origin(options.baseUrl)}/api/manage/v1`,
    fetch: fetchWithRetry(options),
    headers: { authorization: `Bearer ${options.apiKey}` },
  });
}
