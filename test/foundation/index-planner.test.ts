import { describe, expect, it } from 'vitest';
import { queryShape, served, type DeclaredIndex } from '../support/index-planner.ts';

/** The planner rules the index-coverage test applies (test/support/index-planner.ts), one by one. */
const index = (keys: DeclaredIndex['keys'], unique = false): DeclaredIndex => ({ keys, unique });
const bySiteStatusId = [index({ siteId: 1, status: 1, _id: -1 })];

describe('index planner rules', () => {
  it('splits a filter into equality, range and residual predicates', () => {
    const shape = queryShape({
      siteId: 's',
      status: { $in: ['a', 'b'] },
      kind: { $eq: 'x' },
      at: { $lt: new Date() },
      trashedAt: null,
      gone: { $ne: null },
      title: { $regex: 'abc', $options: 'i' },
      slug: /^abc/,
      $expr: { $gt: ['$a', '$b'] },
    });
    expect(shape.equality.sort()).toEqual(['kind', 'siteId', 'status', 'trashedAt']);
    expect(shape.range.sort()).toEqual(['at', 'gone', 'slug']);
    expect(shape.residual.sort()).toEqual(['$expr', 'title']);
  });

  it('serves equality fields that form a prefix of the index, in any order', () => {
    expect(served({ status: 'draft', siteId: 's' }, [], bySiteStatusId)).toBe(true);
    expect(served({ siteId: 's' }, [], bySiteStatusId)).toBe(true);
  });

  it('refuses when an equality field is not in the prefix (the index would scan and filter)', () => {
    expect(served({ status: 'draft' }, [], bySiteStatusId)).toBe(false);
    expect(served({ siteId: 's', locale: 'en' }, [], bySiteStatusId)).toBe(false);
  });

  it('serves the sort after the equality prefix, same or reversed directions, never mixed', () => {
    expect(served({ siteId: 's', status: 'draft' }, [['_id', -1]], bySiteStatusId)).toBe(true);
    expect(served({ siteId: 's', status: 'draft' }, [['_id', 1]], bySiteStatusId)).toBe(true);
    const two = [index({ siteId: 1, trashedAt: -1, _id: -1 })];
    expect(
      served(
        { siteId: 's' },
        [
          ['trashedAt', -1],
          ['_id', -1],
        ],
        two,
      ),
    ).toBe(true);
    expect(
      served(
        { siteId: 's' },
        [
          ['trashedAt', 1],
          ['_id', 1],
        ],
        two,
      ),
    ).toBe(true);
    expect(
      served(
        { siteId: 's' },
        [
          ['trashedAt', -1],
          ['_id', 1],
        ],
        two,
      ),
    ).toBe(false);
  });

  it('refuses a sort on a field the equality prefix skips over (an in-memory sort)', () => {
    expect(served({ siteId: 's' }, [['_id', -1]], bySiteStatusId)).toBe(false);
  });

  it('lets a sort field bound by equality be skipped', () => {
    expect(
      served(
        { siteId: 's', status: 'draft' },
        [
          ['status', 1],
          ['_id', -1],
        ],
        bySiteStatusId,
      ),
    ).toBe(true);
  });

  it('serves at most one range field, after the equality and sort fields', () => {
    const byAt = [index({ siteId: 1, expiresAt: 1 })];
    expect(served({ siteId: 's', expiresAt: { $lt: new Date() } }, [], byAt)).toBe(true);
    // The range may be on the sort field itself (paging by `_id`).
    expect(served({ siteId: 's', status: 'a', _id: { $lt: 'x' } }, [['_id', -1]], bySiteStatusId)).toBe(true);
    // A range before the equality fields is not served: the equality field is not in the prefix.
    expect(served({ expiresAt: { $lt: new Date() }, kind: 'x' }, [], [index({ expiresAt: 1, kind: 1 })])).toBe(false);
    // Residual predicates ride along on what the bounds narrowed.
    expect(served({ siteId: 's', title: { $regex: 'x' } }, [], bySiteStatusId)).toBe(true);
  });

  it('never serves a bare collection scan, but serves `_id` and unique point lookups whatever else they filter', () => {
    expect(served({}, [], bySiteStatusId)).toBe(false);
    expect(served({ title: { $regex: 'x' } }, [], bySiteStatusId)).toBe(false);
    // ...except one document of anything (a limit of 1, no predicate, no order).
    expect(served({}, [], [], 1)).toBe(true);
    expect(served({}, [], [], 50)).toBe(false);
    expect(served({ _id: 'x', anything: 1 }, [], [])).toBe(true);
    expect(served({ _id: { $in: ['a', 'b'] } }, [], [])).toBe(true);
    const email = [index({ siteId: 1, email: 1 }, true)];
    expect(served({ email: 'a', siteId: 's', status: 'active' }, [], email)).toBe(true);
    expect(served({ email: 'a', status: 'active' }, [], email)).toBe(false);
  });

  it('serves a `$or` only when every branch is served', () => {
    const trash = [index({ siteId: 1, trashedAt: -1, _id: -1 })];
    const page = { siteId: 's', $or: [{ trashedAt: { $lt: new Date() } }, { trashedAt: new Date(), _id: { $lt: 'x' } }] };
    expect(
      served(
        page,
        [
          ['trashedAt', -1],
          ['_id', -1],
        ],
        trash,
      ),
    ).toBe(true);
    expect(served({ siteId: 's', $or: [{ a: 1 }, { b: 2 }] }, [], [index({ siteId: 1, a: 1 })])).toBe(false);
    expect(served({ siteId: 's', $or: [{ a: 1 }, { b: 2 }] }, [], [index({ siteId: 1, a: 1 }), index({ siteId: 1, b: 1 })])).toBe(true);
  });
});
