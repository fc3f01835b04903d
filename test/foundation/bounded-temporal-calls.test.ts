import { describe, expect, it } from 'vitest';
import { Connection } from '@temporalio/client';
import { boundedTemporalCalls } from '../../services/core/engines.ts';

/**
 * Node 20's AsyncLocalStorage keeps whether it is enabled (its promise hook runs for every promise
 * while any storage is) in an own field; a Node whose storage has none fails here first, by name.
 */
function enabled(connection: Connection): boolean {
  const storage = connection.callContextStorage as unknown as { enabled?: boolean };
  expect(storage, 'AsyncLocalStorage has an `enabled` field (Node 20)').toHaveProperty('enabled');
  return storage.enabled === true;
}

describe('Temporal calls under a deadline or an abort signal', () => {
  // A lazy connection opens nothing until a call is sent; these runs send none.
  const connection = Connection.lazy({ address: '127.0.0.1:1' });
  const bounded = boundedTemporalCalls(connection);

  it('gives the calls inside the run its deadline or signal, as the client’s own wrappers do', async () => {
    const deadline = Date.now() + 1234;
    expect(await bounded(deadline, async () => connection.callContextStorage.getStore()?.deadline)).toBe(deadline);
    const signal = new AbortController().signal;
    expect(await bounded(signal, async () => connection.callContextStorage.getStore()?.abortSignal)).toBe(signal);
    // Across awaits too (an Update is several calls).
    expect(
      await bounded(deadline, async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return connection.callContextStorage.getStore()?.deadline;
      }),
    ).toBe(deadline);
  });

  it('leaves the call context disabled once no run is open, failed runs too', async () => {
    expect(enabled(connection)).toBe(false);
    let release!: () => void;
    const first = bounded(Date.now() + 1000, () => new Promise<void>((resolve) => (release = resolve)));
    const second = bounded(Date.now() + 1000, async () => {
      throw new Error('refused');
    });
    await expect(second).rejects.toThrow('refused');
    // One run still open: its calls still need the context.
    expect(enabled(connection)).toBe(true);
    release();
    await first;
    expect(enabled(connection)).toBe(false);
  });
});
