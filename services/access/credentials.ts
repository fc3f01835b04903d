import type { LiveResult } from './live-state.ts';

/** What the surfaces know about a request before it is authenticated. */
export interface Credentials {
  authorization?: string;
  cookies: Record<string, string | undefined>;
  ip: string;
  origin?: string;
  method: string;
  /** The resource URLs (RFC 8707) this endpoint answers for; an OAuth token must be bound to one. */
  resources?: readonly string[];
  /** This request's per-key and per-IP count, when the management lane already made it and handed the request over. */
  counted?: LiveResult;
}
