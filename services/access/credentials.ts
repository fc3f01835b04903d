/** What the surfaces know about a request before it is authenticated. */
export interface Credentials {
  authorization?: string;
  cookies: Record<string, string | undefined>;
  ip: string;
  origin?: string;
  method: string;
  /** The resource URLs (RFC 8707) this endpoint answers for; an OAuth token must be bound to one. */
  resources?: readonly string[];
}
