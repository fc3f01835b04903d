import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isPublicAddress } from './addresses.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has. Injected so tests can play DNS rebinding. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
};

/** Why a target was refused; the message is safe to show and to store in the history. */
export class TargetRejectedError extends Error {
  override name = 'TargetRejectedError';
  /** A DNS failure may pass (worth retrying a delivery); an internal address will not. */
  constructor(
    message: string,
    readonly transient = false,
  ) {
    super(message);
  }
}

/** A target that passed the checks, with the one address the connection must use. */
export interface VettedTarget {
  url: URL;
  address: ResolvedAddress;
}

export interface TargetGuard {
  /** Syntax only (scheme, host, no credentials): what can be judged without DNS. */
  parse(raw: string): URL;
  /** Parse, resolve and check every address. Run at save time and again before every attempt. */
  vet(raw: string): Promise<VettedTarget>;
}

/**
 * The SSRF guard. HTTPS only, unless private targets are explicitly allowed (tests, local
 * development: then plain HTTP is accepted too). A name is refused if ANY of its addresses is
 * internal, and the caller connects to the vetted address, so a second DNS answer cannot differ.
 */
export function createTargetGuard(options: { allowPrivate: boolean; resolve?: Resolver }): TargetGuard {
  const resolve = options.resolve ?? systemResolver;

  function parse(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new TargetRejectedError('url: must be an absolute URL');
    }
    const allowedSchemes = options.allowPrivate ? ['https:', 'http:'] : ['https:'];
    if (!allowedSchemes.includes(url.protocol)) throw new TargetRejectedError('url: must use https');
    if (url.username || url.password) throw new TargetRejectedError('url: must not carry credentials');
    if (!url.hostname) throw new TargetRejectedError('url: must name a host');
    return url;
  }

  async function vet(raw: string): Promise<VettedTarget> {
    const url = parse(raw);
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    let addresses: ResolvedAddress[];
    const literal = isIP(host);
    if (literal) {
      addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
    } else {
      try {
        addresses = await resolve(host);
      } catch {
        throw new TargetRejectedError('url: host name does not resolve', true);
      }
      if (addresses.length === 0) throw new TargetRejectedError('url: host name does not resolve', true);
    }
    if (!options.allowPrivate && addresses.some((entry) => !isPublicAddress(entry.address))) {
      throw new TargetRejectedError('url: private, loopback and link-local addresses are not allowed');
    }
    return { url, address: addresses[0] };
  }

  return { parse, vet };
}
