import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import pino from 'pino';
import Fastify from 'fastify';
import { loggerOptions } from '../../services/core/logger.ts';
import { REDACTED, redactLogLine, redactedPaths } from '../../services/core/log-redaction.ts';

/** A logger with the service's options, and the lines it wrote (parsed). */
function capture(traced = false) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino(loggerOptions('info', traced), sink), lines };
}

describe('log redaction', () => {
  it('documents the paths it censors', () => {
    expect(redactedPaths).toEqual([
      'req.headers["authorization"]',
      'req.headers["cookie"]',
      'req.headers["x-api-key"]',
      'res.headers["set-cookie"]',
      '*.password',
      '*.secret',
      '*.key',
      '*.secretHash',
      '*.token',
      'headers.authorization',
      'headers.cookie',
    ]);
  });

  it('replaces every documented secret in a written line and leaves the caller’s objects unchanged', () => {
    const { log, lines } = capture();
    const user = { email: 'a@example.test', password: 'hunter2' };
    const apiKey = { id: 'k1', secretHash: 'abc', key: 'cwb_secret', token: 't', secret: 's' };
    const req = { method: 'GET', headers: { authorization: 'Bearer x', cookie: 'sid=1', 'x-api-key': 'cwb_1', accept: 'json' } };
    const res = { statusCode: 200, headers: { 'set-cookie': 'sid=2', 'content-type': 'json' } };
    const headers = { authorization: 'Basic y', cookie: 'a=b', host: 'example.test' };
    log.info({ user, apiKey, req, res, headers, note: 'kept' }, 'line');

    const [line] = lines;
    expect(line.user).toEqual({ email: 'a@example.test', password: REDACTED });
    expect(line.apiKey).toEqual({ id: 'k1', secretHash: REDACTED, key: REDACTED, token: REDACTED, secret: REDACTED });
    expect(line.req).toEqual({ method: 'GET', headers: { authorization: REDACTED, cookie: REDACTED, 'x-api-key': REDACTED, accept: 'json' } });
    expect(line.res).toEqual({ statusCode: 200, headers: { 'set-cookie': REDACTED, 'content-type': 'json' } });
    expect(line.headers).toEqual({ authorization: REDACTED, cookie: REDACTED, host: 'example.test' });
    expect(line.note).toBe('kept');
    expect(line.msg).toBe('line');
    // Nothing the caller holds was changed.
    expect(user.password).toBe('hunter2');
    expect(apiKey.key).toBe('cwb_secret');
    expect(req.headers.authorization).toBe('Bearer x');
    expect(res.headers['set-cookie']).toBe('sid=2');
    expect(headers.cookie).toBe('a=b');
  });

  it('censors the logger’s own bindings', () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    pino({ ...loggerOptions('info'), base: { client: { id: 'c1', secret: 'shh' } } }, sink).info('bound');
    expect(lines[0].client).toEqual({ id: 'c1', secret: REDACTED });
  });

  it('writes an error carrying a secret as the error it is, with the secret replaced', () => {
    const { log, lines } = capture();
    const error = Object.assign(new TypeError('refused'), { token: 'tok', code: 'E_REFUSED' });
    log.error({ err: error }, 'failed');
    const written = lines[0].err as Record<string, unknown>;
    expect(written).toMatchObject({ type: 'TypeError', message: 'refused', token: REDACTED, code: 'E_REFUSED' });
    expect(written.stack).toMatch(/TypeError: refused/);
    expect(error.token).toBe('tok');
  });

  it('goes one level down only, as the paths say, and leaves arrays and strings alone', () => {
    const { log, lines } = capture();
    log.info({ deep: { inner: { password: 'p' } }, list: [{ password: 'p' }], password: 'top-level is no documented path' });
    expect(lines[0].deep).toEqual({ inner: { password: 'p' } });
    expect(lines[0].list).toEqual([{ password: 'p' }]);
    expect(lines[0].password).toBe('top-level is no documented path');
  });

  it('hands back the very same line when nothing in it is secret (no copy on the hot path)', () => {
    const line = { reqId: 'r1', res: { statusCode: 200 }, responseTime: 0.2, trace_id: undefined };
    expect(redactLogLine(line)).toBe(line);
  });

  it('leaves a request object to its serializer: its own headers never reach the line', () => {
    const request = new IncomingMessage(new Socket());
    request.headers = { authorization: 'Bearer x' };
    const line = { req: request };
    expect(redactLogLine(line)).toBe(line);
  });

  it('redacts what a route logs through its request’s logger (Fastify’s child, per request)', async () => {
    const lines: Record<string, unknown>[] = [];
    const stream = { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) };
    const app = Fastify({ logger: { ...loggerOptions('info'), stream } });
    app.get('/', (request) => {
      request.log.info({ account: { email: 'e', password: 'p' } }, 'in a route');
      return { ok: true };
    });
    const answer = await app.inject({ method: 'GET', url: '/', headers: { authorization: 'Bearer secret' } });
    await app.close();
    expect(answer.statusCode).toBe(200);
    const routeLine = lines.find((line) => line.msg === 'in a route')!;
    expect(routeLine.account).toEqual({ email: 'e', password: REDACTED });
    expect(routeLine.reqId).toBeTruthy();
    expect(JSON.stringify(lines)).not.toContain('Bearer secret');
  });

  it('redacts lines written inside a traced logger too', () => {
    const { log, lines } = capture(true);
    log.info({ user: { password: 'p' } }, 'traced');
    expect(lines[0].user).toEqual({ password: REDACTED });
  });
});
