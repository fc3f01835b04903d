import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, defaultSiteContext } from '../support/access.ts';
import { startEntry, stopEntry, worldEnv } from '../support/entry-process.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';
import { SEARCH_COLLECTION } from '../../services/content/search-index.ts';

/**
 * A person's write answers before its search postings are written (content/search-sync.ts): the
 * real gateway entry, stopped with SIGTERM right after its writes answered, has written them when
 * it exits (docs/content.md, "Search"; it settles the queued groups before its connection closes).
 */
describe('a gateway stopped right after writes', { timeout: 300_000 }, () => {
  const children: ChildProcess[] = [];
  let world: World | undefined;

  afterAll(async () => {
    await Promise.all(children.map(stopEntry));
    await world?.close();
  });

  it('writes their queued search postings before it exits', async () => {
    world = await startWorld();
    const gateway = await startEntry(
      children,
      ['--import', 'tsx', 'services/gateway.ts'],
      {
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        HOST: '127.0.0.1',
        PORT: '0',
        ...worldEnv(world),
      },
      ['gateway listening'],
    );
    const base = gateway.line('gateway listening').address as string;
    const { key } = await createApiKey(world, { capabilities: [...CAPABILITIES] });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await fetch(`${base}/api/manage/v1/content`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', host: 'localhost' },
        body: JSON.stringify({ title: `Drained heron ${i}`, slug: `drained-heron-${i}` }),
      });
      expect(created.status).toBe(201);
      ids.push(((await created.json()) as { id: string }).id);
    }
    // At once: well inside the 100 ms the site's postings gather for.
    await stopEntry(gateway.child);
    expect(gateway.child.exitCode).toBe(0);
    expect(gateway.line('gateway draining')).toBeTruthy();
    const ctx = await defaultSiteContext(world);
    const postings = ctx.db.collection<{ entryId: string; view: string; token: string }>(SEARCH_COLLECTION);
    for (const id of ids) {
      const words = (await postings.find({ entryId: id, view: 'w' }).toArray()).map((posting) => posting.token).sort();
      expect(words, id).toEqual(expect.arrayContaining(['drained', 'heron']));
    }
  });
});
