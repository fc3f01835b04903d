import type { IncomingMessage } from 'node:http';
import { compileIpRules, isValidIpRule } from './ip-rules.ts';

/**
 * `TRUST_PROXY`, parsed: whose `X-Forwarded-*` headers are believed (docs/access.md, "Client
 * address"). `none`: nobody's, the socket's address is the client. `addresses`: a peer inside
 * these addresses/CIDRs is a proxy, and so is each further hop it names that is inside them too.
 * `hops`: the nearest `hops` peers are proxies whoever they are (only for gateways that nothing but
 * the proxies can reach).
 */
export type ProxyTrust =
  { readonly kind: 'none' } | { readonly kind: 'hops'; readonly hops: number } | { readonly kind: 'addresses'; readonly rules: readonly string[] };

export const NO_PROXY: ProxyTrust = { kind: 'none' };

const MAX_HOPS = 16;

/** The setting's text as a `ProxyTrust`, or why it is refused. */
export function parseProxyTrust(text: string): ProxyTrust | { error: string } {
  const value = text.trim().toLowerCase();
  if (['false', 'no', 'off', 'none', '0'].includes(value)) return NO_PROXY;
  if (['true', 'yes', 'on', '*'].includes(value)) {
    return {
      error:
        'trusting every peer is refused: any client could then forge its address in X-Forwarded-For (allowed IPs, per-IP limits, audit); ' +
        "give the proxies' addresses or CIDRs (e.g. 10.0.0.2,172.28.0.0/24) or a hop count",
    };
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return hops <= MAX_HOPS ? { kind: 'hops', hops } : { error: `a hop count is at most ${MAX_HOPS}` };
  }
  const rules = value.split(',').map((rule) => rule.trim());
  const bad = rules.find((rule) => !isValidIpRule(rule));
  if (bad !== undefined) return { error: `"${bad}" is not an IP address or CIDR (a comma-separated list of them, or a hop count)` };
  return { kind: 'addresses', rules };
}

/** Is the peer at this address, `hop` steps from the gateway (0: the socket's peer), a proxy we trust? */
export type TrustsProxy = (address: string, hop: number) => boolean;

/**
 * The one rule, given to Fastify as its `trustProxy` function (request.ip, .protocol, .host) and
 * used by the lanes in front of it through `clientAddress`.
 */
export function trustsProxy(trust: ProxyTrust): TrustsProxy {
  if (trust.kind === 'hops') return (_address, hop) => hop < trust.hops;
  if (trust.kind === 'addresses') {
    const inside = compileIpRules(trust.rules)!;
    return (address) => inside(address);
  }
  return () => false;
}

/**
 * The client's address as Fastify's `request.ip` derives it with the same `trusts` (proxy-addr's
 * walk over @fastify/forwarded's parse): from the socket's peer, each trusted hop hands over to
 * the address it forwarded for, right to left through `X-Forwarded-For`; the first untrusted one
 * (or the last entry) is the client. test/access/client-address.test.ts holds both to the same answers.
 */
export function clientAddress(request: Pick<IncomingMessage, 'headers' | 'socket'>, trusts: TrustsProxy): string {
  const socketAddress = request.socket.remoteAddress ?? '';
  const header = request.headers['x-forwarded-for'];
  if (typeof header !== 'string' || !trusts(socketAddress, 0)) return socketAddress;
  const forwarded = forwardedAddresses(header);
  let address = socketAddress;
  for (let hop = 0; hop < forwarded.length; hop++) {
    if (hop > 0 && !trusts(address, hop)) break;
    address = forwarded[hop];
  }
  return address;
}

/** `X-Forwarded-For` entries, nearest first, trimmed as @fastify/forwarded trims them. */
function forwardedAddresses(header: string): string[] {
  if (!header.includes(',')) {
    const only = header.trim();
    return only ? [only] : [];
  }
  return header
    .split(',')
    .map((entry) => entry.replace(/^[ \t]+|[ \t]+$/g, ''))
    .filter((entry) => entry !== '')
    .reverse();
}

/** A proxy is trusted at all (it terminates TLS, so cookies are marked Secure). */
export const behindProxy = (trust: ProxyTrust): boolean => trust.kind !== 'none';
