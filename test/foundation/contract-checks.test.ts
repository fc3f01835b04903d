import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { z } from 'zod';
import { defineOperation } from '../../services/core/operation.ts';
import type { Feature } from '../../services/core/feature.ts';
import type { OperationContext } from '../../services/core/context.ts';
import { features } from '../../services/features.ts';
import { contractChecksOn } from '../../services/core/config.ts';
import { startWorld, type World } from '../support/world.ts';

/**
 * The runner holds every operation to its own definition while contract checks are on (tests and
 * development): an answer outside `output`, an event missing from `events`, or `ctx.scope` used
 * without a `scope:` declaration is a 500 with an error log line. Probes break each rule once;
 * the same probes with checks off (production) show the check is what catches them.
 */
type Handler = (ctx: OperationContext) => Promise<{ n: number }>;
const probe = (id: string, path: string, handler: Handler, extra: object = {}) =>
  defineOperation({
    id,
    surface: 'public',
    method: 'GET',
    path,
    summary: id,
    requires: 'public',
    input: z.object({}),
    output: z.object({ n: z.number() }),
    handler,
    ...extra,
  });

const probeFeature: Feature = {
  name: 'contract-probes',
  operations: [
    probe(
      'probe.goodAnswer',
      '/probe-good',
      async (ctx) => {
        await ctx.emit('content.created', { id: 'x' });
        return { n: 1 };
      },
      { events: ['content.created'] },
    ),
    probe('probe.badAnswer', '/probe-bad-answer', async () => ({ n: 'one' }) as never),
    probe(
      'probe.undeclaredEvent',
      '/probe-bad-event',
      async (ctx) => {
        await ctx.emit('content.deleted', { id: 'x' });
        return { n: 1 };
      },
      { events: ['content.created'] },
    ),
    probe('probe.undeclaredScope', '/probe-bad-scope', async (ctx) => {
      await ctx.db
        .collection('probe_scope')
        .find(ctx.scope.filter({ siteId: ctx.site._id }, { type: 'type' }))
        .toArray();
      return { n: 1 };
    }),
  ],
};

async function worldWithLog(env: Record<string, string>) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const world = await startWorld({ features: [...features, probeFeature], log: pino({ level: 'error' }, sink), env });
  return { world, lines };
}

describe('contract checks in the operation runner', () => {
  let checked: { world: World; lines: string[] };
  let unchecked: { world: World; lines: string[] };
  beforeAll(async () => {
    [checked, unchecked] = await Promise.all([worldWithLog({}), worldWithLog({ CHECK_CONTRACTS: 'false', NODE_ENV: 'production' })]);
  });
  afterAll(async () => {
    await checked?.world.close();
    await unchecked?.world.close();
  });

  it('is on in tests and development, off in production, and the env flag forces it', () => {
    expect(contractChecksOn({ NODE_ENV: 'test' })).toBe(true);
    expect(contractChecksOn({ NODE_ENV: 'development' })).toBe(true);
    expect(contractChecksOn({ NODE_ENV: 'production' })).toBe(false);
    expect(contractChecksOn({ NODE_ENV: 'production', CHECK_CONTRACTS: true })).toBe(true);
    expect(contractChecksOn({ NODE_ENV: 'test', CHECK_CONTRACTS: false })).toBe(false);
    expect(checked.world.config.CHECK_CONTRACTS).toBeUndefined();
  });

  it('lets an operation that keeps its definition through', async () => {
    const response = await checked.world.app.inject({ url: '/api/v1/probe-good' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ n: 1 });
  });

  for (const [path, message] of [
    ['/api/v1/probe-bad-answer', 'operation probe.badAnswer: answer does not match its output schema (n: '],
    ['/api/v1/probe-bad-event', 'operation probe.undeclaredEvent: emitted content.deleted, which its events list does not declare'],
    ['/api/v1/probe-bad-scope', 'operation probe.undeclaredScope: operation probe.undeclaredScope uses key scope but does not declare it'],
  ] as const) {
    it(`answers 500 and logs why: ${path}`, async () => {
      const response = await checked.world.app.inject({ url: path });
      expect(response.statusCode).toBe(500);
      expect(response.json()).toEqual({ error: 'Internal server error' });
      expect(checked.lines.join('\n')).toContain(message);
    });
  }

  it('negative control: with checks off the same breaches pass unnoticed', async () => {
    expect((await unchecked.world.app.inject({ url: '/api/v1/probe-bad-answer' })).json()).toEqual({ n: 'one' });
    expect((await unchecked.world.app.inject({ url: '/api/v1/probe-bad-event' })).statusCode).toBe(200);
    expect(unchecked.lines.join('\n')).not.toContain('contract violation');
  });
});
