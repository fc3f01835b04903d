import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { VettedTarget } from './target-guard.ts';

export interface SendResult {
  /** null when no answer arrived (connection error or timeout). */
  responseCode: number | null;
  outcome: 'succeeded' | 'failed' | 'timeout';
  error: string | null;
}

// Keep-alive pools per scheme: a pooled socket was opened to a vetted address, so reusing it is safe.
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

/** A lookup that answers with the address the guard vetted: the connection cannot go elsewhere. */
function pinnedLookup(target: VettedTarget): LookupFunction {
  const { address, family } = target.address;
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/**
 * One POST to a vetted target. Redirects are never followed (a 3xx is a failed attempt), the
 * answer's body is discarded, and the whole exchange is bounded by `timeoutMs`.
 */
export function sendDelivery(
  target: VettedTarget,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; onWait?: () => void; waitEveryMs?: number },
): Promise<SendResult> {
  const isHttps = target.url.protocol === 'https:';
  const transport = isHttps ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const beat = options.onWait ? setInterval(options.onWait, options.waitEveryMs ?? 1000) : undefined;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (beat) clearInterval(beat);
      resolve(result);
    };
    const request = transport.request(
      target.url,
      {
        method: 'POST',
        agent: isHttps ? agents.https : agents.http,
        lookup: pinnedLookup(target),
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.resume();
        const code = response.statusCode ?? 0;
        const ok = code >= 200 && code < 300;
        const error = ok ? null : code >= 300 && code < 400 ? `HTTP ${code} (redirects are not followed)` : `HTTP ${code}`;
        response.on('end', () => finish({ responseCode: code, outcome: ok ? 'succeeded' : 'failed', error }));
        response.on('error', () => finish({ responseCode: code, outcome: ok ? 'succeeded' : 'failed', error }));
      },
    );
    const timer = setTimeout(() => {
      finish({ responseCode: null, outcome: 'timeout', error: `no answer within ${options.timeoutMs} ms` });
      request.destroy();
    }, options.timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => {
      finish({ responseCode: null, outcome: 'failed', error: `connection failed: ${error.code ?? error.message}` });
    });
    request.end(body);
  });
}
