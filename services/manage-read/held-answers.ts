import type { ChangeFeed } from '../core/change-feed.ts';
import type { Operation } from '../core/operation.ts';
import type { WriteWatch } from '../core/write-watch.ts';
import type { HeldAnswer, ReadyAnswer } from '../public-read/state.ts';

/** A keyed answer as the management lane sends it again: bytes, ETag, and the access it was computed under. */
export interface HeldKeyedAnswer extends HeldAnswer {
  /** The site's `accessVersion` when the key was checked for it: another version, another answer. */
  accessVersion: number;
}

/**
 * This process's held management reads (`services.manageAnswers`; docs/access.md, "Held management
 * reads"): per site, the answers of `heldAnswer` operations by key and exact URL, under the
 * workspace database's write generation. A write to a watched collection (any process) moves the
 * generation and every answer of that database is gone; so is everything while the feed is not trusted.
 */
export interface ManageAnswers {
  peek(dbName: string, siteId: string, keyId: string, url: string): HeldKeyedAnswer | undefined;
  /**
   * Taken before the operation runs; `keep` stores its answer only if no watched write finished
   * and trust held meanwhile, so an answer read before a write is never kept after it.
   */
  slot(dbName: string, siteId: string, keyId: string, url: string, operation: Operation, accessVersion: number): { keep(answer: ReadyAnswer): void } | null;
  /** Drops every held answer (an operator's "clear cache"). */
  clear(): void;
  size(): number;
}

interface SiteAnswers {
  generation: number;
  /** By key, then URL: a lookup builds no key string (it runs on every held read). */
  answers: Map<string, Map<string, HeldKeyedAnswer>>;
  size: number;
}

export function createManageAnswers(feed: ChangeFeed, writes: WriteWatch, maxEntriesPerSite = 2000): ManageAnswers {
  const sites = new Map<string, SiteAnswers>();
  return {
    peek(dbName, siteId, keyId, url) {
      const site = sites.get(siteId);
      if (!site || !feed.trusted() || site.generation !== writes.generation(dbName)) return undefined;
      return site.answers.get(keyId)?.get(url);
    },
    slot(dbName, siteId, keyId, url, operation, accessVersion) {
      if (!feed.trusted()) return null;
      const generation = writes.generation(dbName);
      return {
        keep(answer) {
          if (!feed.trusted() || writes.generation(dbName) !== generation) return;
          let site = sites.get(siteId);
          if (!site || site.generation !== generation) sites.set(siteId, (site = { generation, answers: new Map(), size: 0 }));
          // Full: the site starts over (a write to what they read drops them all anyway).
          if (site.size >= maxEntriesPerSite) {
            site.answers.clear();
            site.size = 0;
          }
          let byUrl = site.answers.get(keyId);
          if (!byUrl) site.answers.set(keyId, (byUrl = new Map()));
          if (!byUrl.has(url)) site.size++;
          byUrl.set(url, { body: answer.body, length: Buffer.byteLength(answer.body), etag: answer.etag, operation, accessVersion });
        },
      };
    },
    clear: () => sites.clear(),
    size: () => [...sites.values()].reduce((sum, site) => sum + site.size, 0),
  };
}
