// The poll feed reads a short window at each poll and a longer one at each renewal, the whole two
// minutes every so often (core/change-feed.ts): a change stamped before the poll's window (a
// writer's clock behind, a slow insert) is applied by a renewal, one stamped long before it
// landed (its writer frozen in between) by the next whole catch-up, each well inside the time a
// writer waits for its acknowledgements. Against the suite's MongoDB engine, a database of its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient, ObjectId, type Db } from 'mongodb';
import pino from 'pino';
import { createChangeFeed, STATE_CHANGES_COLLECTION, type ChangeFeed } from '../../services/core/change-feed.ts';
import { eventually } from '../support/polling.ts';

const LEASE_MS = 2000;
const SKEW_MS = 1000;

describe('change feed: how far back each read goes', () => {
  let client: MongoClient;
  let db: Db;
  let feed: ChangeFeed;
  const applied: string[] = [];

  beforeAll(async () => {
    client = await new MongoClient(process.env.MONGODB_URI!).connect();
    db = client.db(`feedwindows_${Date.now()}`);
    feed = createChangeFeed({ db, log: pino({ level: 'silent' }), leaseMs: LEASE_MS, skewMs: SKEW_MS, mode: 'poll' });
    feed.subscribe((topic) => topic && applied.push(topic));
    await feed.start();
    expect(feed.trusted()).toBe(true);
  });

  afterAll(async () => {
    await feed?.stop();
    await db?.dropDatabase();
    await client?.close();
  });

  /** A change as a writer whose stamp is `behindMs` old when it lands; how long until this gateway applied and acknowledged it. */
  async function landLate(topic: string, behindMs: number): Promise<number> {
    const changes = db.collection(STATE_CHANGES_COLLECTION);
    const landed = Date.now();
    const { insertedId } = await changes.insertOne({ _id: new ObjectId(), topics: [topic], at: new Date(landed - behindMs), acked: [] });
    const { session } = feed.status();
    await eventually(
      async () => applied.includes(topic) && ((await changes.findOne({ _id: insertedId }))?.acked as string[]).includes(session!),
      `${topic} applied`,
      20_000,
      25,
    );
    return Date.now() - landed;
  }

  it('applies a change the poll reads at once, one stamped before its window at the next renewal, one stamped 40 s earlier within the whole catch-up', async () => {
    // Past the first renewals, so the next ones read the short window.
    await new Promise((resolve) => setTimeout(resolve, 3 * LEASE_MS));
    // A writer's patience: it waits 2 leases + skew + 5 s for the acknowledgements before it fails.
    const patience = 2 * LEASE_MS + SKEW_MS + 5000;
    expect(await landLate('fresh', 0)).toBeLessThan(LEASE_MS / 4);
    // Before the poll's 2 s: a renewal's (every lease / 4) catch-up reads 30 s back.
    expect(await landLate('clock-behind', 8000)).toBeLessThan(LEASE_MS / 4 + 1000);
    // Before the renewal's 30 s too (and after the session's start, from which every catch-up reads): the
    // whole two minutes are read at least every half a writer's patience.
    expect(await landLate('frozen-writer', 40_000)).toBeLessThan(patience / 2 + LEASE_MS / 4 + 1000);
    expect(applied).toEqual(expect.arrayContaining(['fresh', 'clock-behind', 'frozen-writer']));
  });
});
