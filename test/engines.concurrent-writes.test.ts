// The local MongoDB engine under updates that follow each other faster than its background commit
// (every 200 ms): the library's update changed the stored document object in place while MVStore's
// commit thread was encoding it, the commit failed with a ConcurrentModificationException, MVStore
// closed itself ("This store is closed") and the file's last chunk could not be read after a
// restart (CI, session 13). Runs its own engine, built from this checkout.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MongoClient, type UpdateFilter } from 'mongodb';
import { ensureEngines, stopEngines } from '../scripts/engines.mjs';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engines-concurrent-'));
const engine = { dataDir, mongoPort: 27557, temporal: false, log: () => undefined };

/** Wide documents: encoding one takes long enough for an update to land meanwhile. */
const FIELDS = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`field${i}`, 'x'.repeat(50)])) as { field199: string; [field: string]: string };
const DOCUMENTS = 150;

type Doc = { _id: string; n: number; modified: number; field199: string };

describe('local engine: updates faster than its commits', () => {
  let client: MongoClient | undefined;
  const connect = async () => {
    const { mongoUri } = await ensureEngines(engine);
    client = await MongoClient.connect(mongoUri, { serverSelectionTimeoutMS: 5000 });
    return client.db('concurrent').collection<Doc>('docs');
  };

  afterAll(async () => {
    await client?.close();
    await stopEngines({ dataDir });
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every update and a readable file', { timeout: 120_000 }, async () => {
    let docs = await connect();
    await docs.insertMany(Array.from({ length: DOCUMENTS }, (_, i) => ({ _id: `d${i}`, n: 0, modified: 0, ...FIELDS })));
    let rounds = 0;
    let modified = 0;
    for (const started = Date.now(); Date.now() - started < 8_000; rounds++) {
      const [, , changed] = await Promise.all([
        docs.updateMany({}, { $inc: { n: 1 }, $set: { [`f${rounds % 7}`]: rounds } } as UpdateFilter<Doc>),
        docs.updateMany({}, { $unset: { [`f${(rounds + 3) % 7}`]: '' } } as UpdateFilter<Doc>),
        docs.findOneAndUpdate({ _id: `d${rounds % DOCUMENTS}` }, { $inc: { modified: 1 } }, { returnDocument: 'after' }),
        docs.find({}).toArray(),
      ]);
      expect(changed?.modified).toBeGreaterThan(0);
      modified++;
    }
    const counts = async () => {
      const all = await docs.find({}, { projection: { n: 1, modified: 1, field199: 1 } }).toArray();
      return {
        documents: all.length,
        n: new Set(all.map((d) => d.n)),
        modified: all.reduce((sum, d) => sum + d.modified, 0),
        wide: all.every((d) => d.field199 === FIELDS.field199),
      };
    };
    const expected = { documents: DOCUMENTS, n: new Set([rounds]), modified, wide: true };
    expect(await counts()).toEqual(expected);
    // The same from the file after a restart (a failed commit left its last chunk unreadable).
    await client?.close();
    await stopEngines({ dataDir });
    docs = await connect();
    expect(await counts()).toEqual(expected);
  });
});
