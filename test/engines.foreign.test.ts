// scripts/engines.mjs must not attach one data folder to engines another folder started (issue 10):
// asked for engines on the ports the suite's engines already use, with a different data folder,
// it refuses and names the variables to set. Nothing is started.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureEngines } from '../scripts/engines.mjs';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engines-foreign-'));
const mongoPort = Number(new URL(process.env.MONGODB_URI ?? 'mongodb://127.0.0.1:27117').port || 27017);
const temporalPort = Number((process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233').split(':').pop());

describe('local engines of another data folder', () => {
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('refuses to attach a data folder to engines it did not start, naming the folder and the variables', async () => {
    const attempt = ensureEngines({ dataDir, mongoPort, temporalPort, log: () => undefined, timeoutMs: 5_000 });
    await expect(attempt).rejects.toThrow(/did not start[\s\S]*MONGO_PORT[\s\S]*TEMPORAL_ADDRESS/);
    await expect(attempt).rejects.toThrow(new RegExp(`mongo: 127\\.0\\.0\\.1:${mongoPort}[\\s\\S]*temporal: 127\\.0\\.0\\.1:${temporalPort}`));
    expect(fs.readdirSync(dataDir).filter((f) => f.endsWith('.pid'))).toEqual([]);
  });
});
