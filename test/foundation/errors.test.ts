import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import { startWorld, type World } from '../support/world.ts';
import { probeFeature } from '../support/probe-feature.ts';
import { features } from '../../services/features.ts';
import { loggerOptions } from '../../services/core/logger.ts';

describe('error answers', () => {
  let world: World;
  const logLines: string[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    world = await startWorld({
      features: [...features, probeFeature],
      env: { BODY_LIMIT_BYTES: '2048' },
      log: pino(loggerOptions('info'), sink),
    });
  });
  afterAll(() => world?.close());

  const notes = () => world.services.mongo.db(world.defaultWorkspace.dbName).collection('test_notes').countDocuments({});

  it('names the field that failed validation, and stores nothing', async () => {
    const before = await notes();
    const response = await world.app.inject({ method: 'POST', url: '/api/v1/test-notes', payload: { text: '' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatch(/^text: /);
    const wrongType = await world.app.inject({ method: 'POST', url: '/api/v1/test-notes', payload: { text: 'a', count: 'x' } });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().error).toMatch(/^count: /);
    expect(await notes()).toBe(before);
  });

  it('answers malformed JSON with 400', async () => {
    const before = await notes();
    const response = await world.app.inject({
      method: 'POST',
      url: '/api/v1/test-notes',
      headers: { 'content-type': 'application/json' },
      payload: '{"text": "unterminated',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: 'Malformed JSON body' });
    expect(await notes()).toBe(before);
  });

  it('answers an unknown route with 404 { error }', async () => {
    const response = await world.app.inject({ url: '/api/v1/nothing-here' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'Not found' });
  });

  it('answers a body over the limit with 413, and stores nothing', async () => {
    const before = await notes();
    const response = await world.app.inject({
      method: 'POST',
      url: '/api/v1/test-notes',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ text: 'x'.repeat(5000) }),
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({ error: 'Request body too large' });
    expect(await notes()).toBe(before);
  });

  it('hides an unexpected failure behind a 500 and logs it with the request id', async () => {
    const response = await world.app.inject({ url: '/api/v1/test-explode', headers: { 'x-request-id': 'req-123' } });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ error: 'Internal server error' });
    expect(response.body).not.toContain('hunter2');
    expect(response.headers['x-request-id']).toBe('req-123');
  });

  it('never writes authorization headers or cookies to the log', async () => {
    await world.app.inject({
      url: '/api/v1/test-explode',
      headers: { authorization: 'Bearer svk_supersecretvalue', cookie: 'sid=topsecretcookie' },
    });
    const all = logLines.join('');
    expect(all).not.toContain('svk_supersecretvalue');
    expect(all).not.toContain('topsecretcookie');
  });
});
