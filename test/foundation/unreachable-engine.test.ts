import { describe, expect, it } from 'vitest';
import { MongoBulkWriteError, MongoNetworkError, MongoServerError } from 'mongodb';
import { unreachableEngine } from '../../services/core/engines.ts';

// Which errors say an engine is missing (a 503 with Retry-After) and which are the request's own (docs/production.md).
describe('unreachableEngine', () => {
  const bulk = (error: Error | object) => new MongoBulkWriteError(error as never, {} as never);

  it('sees the database missing behind a bulk write: insertMany and bulkWrite wrap the broken connection', () => {
    expect(unreachableEngine(new MongoNetworkError('connection 7 to 127.0.0.1:27537 closed'))).toBe('database');
    expect(unreachableEngine(bulk(new MongoNetworkError('connection 7 to 127.0.0.1:27537 closed')))).toBe('database');
  });

  it('leaves a bulk write refused by the server (duplicate key) to the request', () => {
    expect(unreachableEngine(bulk({ message: 'E11000 duplicate key', code: 11000, writeErrors: [] }))).toBeNull();
    expect(unreachableEngine(bulk(new MongoServerError({ message: 'not allowed', code: 13 })))).toBeNull();
  });
});
