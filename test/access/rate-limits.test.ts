import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, setKeySettings } from '../support/access.ts';
import { featuresWithProbe } from './probe-feature.ts';
import { bearer, freshWindow } from './world-helpers.ts';
import { HEAVY_LIMIT_PER_MIN } from '../../services/access/gate.ts';
import { pinnedClock } from './clock.ts';

let world: World;
const children: ChildProcess[] = [];

// In-process windows follow this clock, so a slow machine cannot roll a window mid-test; the
// separate gateway processes use real time (see freshWindow there).
const clock = pinnedClock();
beforeAll(async () => {
  world = await startWorld({ features: featuresWithProbe, clock });
});
afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
  await world?.close();
});

function startGateway(): Promise<string> {
  const env = {
    ...process.env,
    MONGODB_URI: world.config.MONGODB_URI,
    TEMPORAL_ADDRESS: world.config.TEMPORAL_ADDRESS,
    DB_PREFIX: world.config.DB_PREFIX,
    SECRET_KEY: world.config.SECRET_KEY,
    LOG_LEVEL: 'silent',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/access/gateway-process.ts'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = /PORT=(\d+)/.exec(out);
      if (match) resolve(`http://127.0.0.1:${match[1]}`);
    });
    child.once('exit', (code) => reject(new Error(`gateway exited ${code}`)));
  });
}

const manage = (key: string, path = '/probe', remoteAddress = '127.0.0.1') =>
  world.app.inject({ method: 'GET', url: `/api/manage/v1${path}`, headers: bearer(key), remoteAddress });

describe('per-key budget', () => {
  it('answers 429 with an integer Retry-After once rateLimitPerMin is spent; RateLimit header on every response', { timeout: 180_000 }, async () => {
    const { key } = await createApiKey(world, { capabilities: ['content:read'], rateLimitPerMin: 3 });
    for (let i = 0; i < 3; i++) {
      const ok = await manage(key);
      expect(ok.statusCode).toBe(200);
      expect(ok.headers.ratelimit).toMatch(new RegExp(`"key";r=${2 - i};t=\\d+`));
      expect(ok.headers['ratelimit-policy']).toMatch(/"key";q=3;w=60/);
    }
    const limited = await manage(key);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ error: 'Too many requests' });
    const retryAfter = limited.headers['retry-after'];
    expect(retryAfter).toMatch(/^\d+$/);
    // The window is pinned 10 s into its minute: 50 s remain.
    expect(retryAfter).toBe('50');
    expect(limited.headers.ratelimit).toMatch(/"key";r=0;t=\d+/);
    // Another key has its own budget.
    const other = await createApiKey(world, { capabilities: ['content:read'] });
    expect((await manage(other.key)).statusCode).toBe(200);
  });

  it('two gateway processes on one database share one budget', { timeout: 240_000 }, async () => {
    const [a, b] = await Promise.all([startGateway(), startGateway()]);
    await freshWindow(30);
    const { key } = await createApiKey(world, { capabilities: ['content:read'], rateLimitPerMin: 10 });
    const statuses: number[] = [];
    // First one call each, in turn (both gateways learn the key), then a concurrent burst on both.
    for (const base of [a, b]) statuses.push((await fetch(`${base}/api/manage/v1/settings`, { headers: bearer(key) })).status);
    const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => fetch(`${[a, b][i % 2]}/api/manage/v1/settings`, { headers: bearer(key) })));
    for (const res of burst) {
      statuses.push(res.status);
      if (res.status === 429) expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    // settings:read is not held, so allowed calls are 403s: the budget counts calls, not successes.
    expect(statuses.filter((s) => s !== 429)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(4);
  });
});

describe('concurrent bursts', () => {
  it('counts exactly when requests arrive together (batched increments)', { timeout: 180_000 }, async () => {
    const { key } = await createApiKey(world, { capabilities: ['content:read'], rateLimitPerMin: 10 });
    const statuses = (await Promise.all(Array.from({ length: 30 }, () => manage(key)))).map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
  });
});

describe('per-IP budget', () => {
  it('caps one address across keys at the site default', { timeout: 180_000 }, async () => {
    await setKeySettings(world, { defaultRateLimitPerMin: 4 });
    try {
      const keys = await Promise.all([1, 2, 3].map(() => createApiKey(world, { capabilities: ['content:read'] })));
      const statuses = [];
      for (const { key } of [...keys, ...keys]) statuses.push((await manage(key, '/probe', '203.0.113.50')).statusCode);
      expect(statuses.filter((s) => s === 200)).toHaveLength(4);
      expect(statuses.filter((s) => s === 429)).toHaveLength(2);
      // Failed authentications from one address have the same budget: guessing turns into 429s.
      const guesses = [];
      for (let i = 0; i < 5; i++) guesses.push((await manage(`svk_${'x'.repeat(55)}`, '/probe', '203.0.113.51')).statusCode);
      expect(guesses).toEqual([401, 401, 401, 401, 429]);
    } finally {
      await setKeySettings(world, { defaultRateLimitPerMin: 100_000 });
    }
  });
});

describe("a key's budget is spent only after its secret matched", () => {
  it("wrong secrets with a valid lookup part spend the address's failed-auth budget, never the key's", { timeout: 180_000 }, async () => {
    await setKeySettings(world, { defaultRateLimitPerMin: 5 });
    try {
      const { key } = await createApiKey(world, { capabilities: ['content:read'], rateLimitPerMin: 3 });
      const owner = '203.0.113.61';
      // The gateway now holds the key: the path on which counting and reading are one statement.
      expect((await manage(key, '/probe', owner)).statusCode).toBe(200);
      const forged = `${key.slice(0, 16)}${key[16] === 'A' ? 'B' : 'A'}${key.slice(17)}`;
      const guesses = (await Promise.all(Array.from({ length: 8 }, () => manage(forged, '/probe', '203.0.113.60')))).map((r) => r.statusCode);
      // The guessing address runs into its own failed-auth budget (the site default, 5).
      expect(guesses.filter((s) => s === 401)).toHaveLength(5);
      expect(guesses.filter((s) => s === 429)).toHaveLength(3);
      // Wrong secrets from the owner's own address do not spend the key either.
      expect((await manage(forged, '/probe', owner)).statusCode).toBe(401);
      const second = await manage(key, '/probe', owner);
      expect(second.statusCode).toBe(200);
      expect(second.headers.ratelimit).toMatch(/"key";r=1;/);
      expect((await manage(key, '/probe', owner)).statusCode).toBe(200);
      expect((await manage(key, '/probe', owner)).statusCode).toBe(429);
    } finally {
      await setKeySettings(world, { defaultRateLimitPerMin: 100_000 });
    }
  });
});

describe('extra limiters', () => {
  it('heavy operations pass through an extra per-caller limiter', { timeout: 180_000 }, async () => {
    const { key } = await createApiKey(world, { capabilities: ['content:read'] });
    const statuses = [];
    for (let i = 0; i <= HEAVY_LIMIT_PER_MIN; i++) {
      statuses.push((await world.app.inject({ method: 'POST', url: '/api/manage/v1/probe-heavy', headers: bearer(key), payload: {} })).statusCode);
    }
    expect(statuses.slice(0, HEAVY_LIMIT_PER_MIN).every((s) => s === 200)).toBe(true);
    expect(statuses[HEAVY_LIMIT_PER_MIN]).toBe(429);
    // Ordinary routes on the same key are untouched.
    expect((await manage(key)).statusCode).toBe(200);
  });

  it('a per-operation public limit (search: 60 per minute per IP)', { timeout: 180_000 }, async () => {
    const hit = (ip: string) => world.app.inject({ method: 'GET', url: '/api/v1/probe-search', remoteAddress: ip });
    for (let i = 0; i < 60; i++) expect((await hit('198.51.100.1')).statusCode).toBe(200);
    const limited = await hit('198.51.100.1');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect((await hit('198.51.100.2')).statusCode).toBe(200);
  });
});
