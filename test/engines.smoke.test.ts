// Smoke test for scripts/engines.mjs: starts both local engines on non-default ports with a
// throw-away data dir, checks they answer, restarts them and checks that data persisted.
// First run installs the engines into .engines/ (needs python3+pip, java 17, mvn); later runs reuse it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MongoClient } from 'mongodb';
import { Connection } from '@temporalio/client';
import * as engines from '../scripts/engines.mjs';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engines-smoke-'));
const opts = { dataDir, mongoPort: 27217, temporalPort: 7333, log: () => {} };

async function checkTemporal(address: string, namespace: string) {
  const connection = await Connection.connect({ address });
  try {
    const res = await connection.workflowService.describeNamespace({ namespace });
    return res.namespaceInfo?.name;
  } finally {
    await connection.close();
  }
}

describe('local engines', () => {
  afterAll(async () => {
    await engines.stopEngines({ dataDir });
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('start, answer, restart with persisted data', { timeout: 300_000 }, async () => {
    const first = await engines.ensureEngines(opts);
    expect(first.mongoUri).toBe('mongodb://127.0.0.1:27217');
    expect(first.temporalAddress).toBe('127.0.0.1:7333');

    let client = await MongoClient.connect(first.mongoUri, { serverSelectionTimeoutMS: 5000 });
    await client
      .db('smoke')
      .collection('items')
      .insertOne({ _id: 'persist' as never, n: 1 });
    await client.close();
    expect(await checkTemporal(first.temporalAddress, first.temporalNamespace)).toBe('default');

    // Second call reuses the running engines and must be quick.
    const t0 = Date.now();
    await engines.ensureEngines(opts);
    expect(Date.now() - t0).toBeLessThan(5000);

    await engines.stopEngines({ dataDir });
    const again = await engines.ensureEngines(opts);
    client = await MongoClient.connect(again.mongoUri, { serverSelectionTimeoutMS: 5000 });
    const doc = await client
      .db('smoke')
      .collection('items')
      .findOne({ _id: 'persist' as never });
    await client.close();
    expect(doc?.n).toBe(1);
    expect(await checkTemporal(again.temporalAddress, again.temporalNamespace)).toBe('default');
  });
});
