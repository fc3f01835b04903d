// The local MongoDB engine reads and writes BSON with a codec of its own (engines/mongo/Launcher.java
// `ArrayBson`: the stored documents and every OP_MSG answer). Every type the driver sends must come
// back as it went in, from the engine's memory and from its file after a restart, in answers of
// every size, and what the engine cannot hold is refused as before. Runs its own engine, built from
// this checkout, so it checks this launcher whatever engine the suite runs on.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Binary, BSON, Code, Decimal128, Double, Int32, Long, MaxKey, MinKey, MongoClient, ObjectId, Timestamp, UUID, type Document } from 'mongodb';
import { ensureEngines, stopEngines } from '../scripts/engines.mjs';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engines-bson-'));
const engine = { dataDir, mongoPort: 27577, temporal: false, log: () => undefined };

let client: MongoClient;
async function connect() {
  const { mongoUri } = await ensureEngines(engine);
  client = await MongoClient.connect(mongoUri, { serverSelectionTimeoutMS: 10_000, promoteLongs: false, promoteValues: false });
}

/** One document of every type the engine keeps, nested in documents and arrays, ASCII and not. */
function everyType(i: number): Document {
  const scalars = {
    double: new Double(1.5 + i),
    negativeZero: new Double(-0),
    text: `entry ${i}`,
    accents: `Crème brûlée ${i} — 東京 🍮`,
    empty: '',
    int: new Int32(-7 - i),
    long: Long.fromString('9007199254740993'),
    bool: i % 2 === 0,
    nothing: null,
    date: new Date(Date.UTC(2026, 10, 28, 4, 0, i)),
    oid: new ObjectId(),
    binary: new Binary(Buffer.from([0, 1, 2, 255, i & 0xff])),
    uuid: new UUID('0123abcd-4567-89ef-0123-456789abcdef'),
    legacyUuid: new Binary(Buffer.from('00112233445566778899aabbccddeeff', 'hex'), Binary.SUBTYPE_UUID_OLD),
    regex: new BSON.BSONRegExp('^a.c$', 'i'),
    timestamp: new Timestamp({ t: 1_700_000_000, i: 3 }),
    decimal: Decimal128.fromString('1234.5678'),
    min: new MinKey(),
    max: new MaxKey(),
    code: new Code('function () { return 1; }'),
  };
  return {
    _id: `doc-${i}`,
    ...scalars,
    'clé ünïcode': 'key of non-ASCII letters',
    nested: { ...scalars, deeper: { list: [1, 'two', { three: 3 }, [4, [5]]] } },
    list: Object.values(scalars),
    emptyList: [],
    emptyDoc: {},
    // Past the codec's first buffer (512 bytes) and its kept one (1 MiB) between answers.
    long_text: 'x'.repeat(i === 0 ? 2 * 1024 * 1024 : 600 + i),
  };
}

const canonical = (doc: unknown) => BSON.EJSON.stringify(doc as Document, { relaxed: false });

describe('local engine BSON codec', () => {
  const docs = Array.from({ length: 120 }, (_, i) => everyType(i));
  const collection = () => client.db('bson').collection('docs');

  beforeAll(connect, 300_000);
  afterAll(async () => {
    await client?.close();
    await stopEngines({ dataDir });
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const check = async () => {
    // One answer of every document (several batches, the first over 2 MiB), and one by one.
    const all = await collection().find({}).sort({ _id: 1 }).toArray();
    expect(all.map(canonical)).toEqual([...docs].sort((a, b) => (a._id < b._id ? -1 : 1)).map(canonical));
    for (const i of [0, 1, 77]) expect(canonical(await collection().findOne({ _id: `doc-${i}` as never }))).toBe(canonical(docs[i]));
    // Matched by values the engine decoded from its own storage.
    expect(Number(await collection().countDocuments({ accents: /東京/, 'nested.deeper.list.2.three': 3 }))).toBe(docs.length);
    expect((await collection().findOne({ uuid: new UUID('0123abcd-4567-89ef-0123-456789abcdef'), int: new Int32(-8) }))?._id).toBe('doc-1');
  };

  it('gives back every type as written, from memory and from the file after a restart', { timeout: 120_000 }, async () => {
    await collection().insertMany(docs);
    await check();
    await client.close();
    await stopEngines({ dataDir });
    await connect();
    await check();
  });

  it('keeps an updated document whole, through the store and the answer', { timeout: 60_000 }, async () => {
    await collection().updateOne({ _id: 'doc-5' as never }, { $set: { 'nested.added': 'ajouté ✓', list: [new Long(5), null, []] } });
    const updated = await collection().findOne({ _id: 'doc-5' as never });
    expect(canonical(updated)).toBe(canonical({ ...docs[5], nested: { ...docs[5]!.nested, added: 'ajouté ✓' }, list: [new Long(5), null, []] }));
    expect(Number(await collection().countDocuments({}))).toBe(docs.length);
  });
});
