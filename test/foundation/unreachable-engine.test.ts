import { describe, expect, it } from 'vitest';
import { MongoBulkWriteError, MongoNetworkError, MongoServerError } from 'mongodb';
import { unreachableEngine } from '../../services/core/engines.ts';
import { onlyDuplicateWrites } from '../../services/core/mongo-errors.ts';

// Which errors say an engine is missing (a 503 with Retry-After) and which are the request's own (docs/production.md).
describe('unreachableEngine', () => {
  const bulk = (error: Error | object) => new MongoBulkWriteError(error as never, {} as never);

  it('sees the database missing behind a bulk write: insertMany and bulkWrite wrap the broken connection', () => {
    expect(unreachableEngine(new MongoNetworkError('connection 7 to 127.0.0.1:27537 closed'))).toBe('database');
    expect(unreachableEngine(bulk(new MongoNetworkError('connection 7 to 127.0.0.1:27537 closed')))).toBe('database');
  });

  it('sees the database missing behind a socket the engine ended, which the driver passes through unwrapped', () => {
    const ended = Object.assign(new Error('This socket has been ended by the other party'), { code: 'EPIPE' });
    expect(unreachableEngine(ended)).toBe('database');
    expect(unreachableEngine(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe('database');
    expect(unreachableEngine(Object.assign(new Error('no such file'), { code: 'ENOENT' }))).toBeNull();
  });

  it('leaves a bulk write refused by the server (duplicate key) to the request', () => {
    expect(unreachableEngine(bulk({ message: 'E11000 duplicate key', code: 11000, writeErrors: [] }))).toBeNull();
    expect(unreachableEngine(bulk(new MongoServerError({ message: 'not allowed', code: 13 })))).toBeNull();
  });
});

// A bulk write that broke as a whole carries no write error: taking it for "only duplicates" made
// the search frequencies' retry send an empty bulk write (a 500 for a write in flight at an outage).
describe('onlyDuplicateWrites', () => {
  const bulk = (writeErrors: { index: number; code: number }[]) =>
    new MongoBulkWriteError({ message: 'bulk', code: writeErrors[0]?.code ?? 0, writeErrors } as never, {} as never);

  it('names the duplicates when they are all a bulk write refused', () => {
    expect(onlyDuplicateWrites(bulk([{ index: 2, code: 11000 }]))?.map((e) => e.index)).toEqual([2]);
  });

  it('is null for a broken connection, another refusal among them, or an error of another kind', () => {
    expect(onlyDuplicateWrites(new MongoBulkWriteError(new MongoNetworkError('connection 7 closed'), {} as never))).toBeNull();
    expect(onlyDuplicateWrites(bulk([]))).toBeNull();
    expect(
      onlyDuplicateWrites(
        bulk([
          { index: 0, code: 11000 },
          { index: 1, code: 121 },
        ]),
      ),
    ).toBeNull();
    expect(onlyDuplicateWrites(new MongoServerError({ message: 'E11000 duplicate key', code: 11000 }))).toBeNull();
  });
});
