import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startWorld, type World } from '../support/world.ts';

describe('generated OpenAPI documents', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(() => world?.close());

  for (const [surface, url] of [
    ['Public Content API', '/api/v1/openapi.json'],
    ['Management API', '/api/manage/v1/openapi.json'],
  ] as const) {
    it(`serves a valid OpenAPI 3.1.0 document for the ${surface} without authentication`, async () => {
      const response = await world.app.inject({ url });
      expect(response.statusCode).toBe(200);
      const document = response.json();
      expect(document.openapi).toBe('3.1.0');
      const result = await new Validator().validate(document);
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
    });
  }

  it('declares bearerAuth and x-required-capability on every Management operation', async () => {
    const document = (await world.app.inject({ url: '/api/manage/v1/openapi.json' })).json();
    expect(document.components.securitySchemes.bearerAuth).toEqual({ type: 'http', scheme: 'bearer' });
    const operations = Object.values(document.paths).flatMap((item) => Object.values(item as object));
    expect(operations.length).toBeGreaterThan(0);
    for (const operation of operations) {
      expect(operation.security).toEqual([{ bearerAuth: [] }]);
      expect(operation['x-required-capability']).toBeDefined();
    }
  });

  it('passes both documents through the openapi.document filter', async () => {
    const seen: string[] = [];
    const remove = world.services.hooks.addFilter<Record<string, any>>('openapi.document', (doc, args) => {
      seen.push(String(args.surface));
      return { ...doc, paths: { ...doc.paths, '/plugin-route': { get: { responses: { '200': { description: 'ok' } } } } } };
    });
    try {
      const manage = (await world.app.inject({ url: '/api/manage/v1/openapi.json' })).json();
      const pub = (await world.app.inject({ url: '/api/v1/openapi.json' })).json();
      expect(manage.paths['/plugin-route']).toBeDefined();
      expect(pub.paths['/plugin-route']).toBeDefined();
      expect(seen).toEqual(['manage', 'public']);
      const again = await new Validator().validate(manage);
      expect(again.valid).toBe(true);
    } finally {
      remove();
    }
  });
});
