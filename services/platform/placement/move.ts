import { setTimeout as sleep } from 'node:timers/promises';
import type { Services } from '../../core/context.ts';
import { DEFAULT_CLUSTER } from '../../core/clusters.ts';
import { placementTopic } from '../../core/placement.ts';
import { topics } from '../../core/topics.ts';
import type { MoveState, Workspace } from '../../core/tenants.ts';
import type { MoveRef } from '../../../workflows/contracts/move.ts';
import { platformCollections } from '../../tenancy/platform-db.ts';
import { workspaceHostNames } from '../lifecycle.ts';
import { moveCollections, type MoveRow, type MoveStep } from './model.ts';
import { collectionNames, countDifferences, prepareCollection, syncCollection, syncDocuments } from './sync.ts';

/** Heartbeats the running activity (services never import Temporal's activity API). */
export type Beat = () => void;

/** A step that retrying cannot mend (the workspace is gone or held, the copy does not verify): the move fails. */
export class MoveStopError extends Error {}

/** A write already past the checks when the switch began finishes within this (its change marked done). */
export const MOVE_DRAIN_MS = 1000;
/** Reads that began on the source before the switch finish within this before the source is dropped. */
const SOURCE_GRACE_MS = 2000;
/** Recorded changes read per batch; a pass before the switch reads at most PASS_BATCHES of them. */
const CHANGE_BATCH = 1000;
const PASS_BATCHES = 20;

const clusterOf = (workspace: Pick<Workspace, 'cluster'>) => workspace.cluster ?? DEFAULT_CLUSTER;

async function moveRow(services: Services, ref: MoveRef): Promise<MoveRow> {
  const row = await moveCollections(services).moves.findOne({ _id: ref.moveId, workspaceId: ref.workspaceId });
  if (!row) throw new MoveStopError('Move not found');
  return row;
}

async function workspaceRow(services: Services, workspaceId: string): Promise<Workspace> {
  const row = await platformCollections(services).workspaces.findOne({ _id: workspaceId });
  if (!row) throw new MoveStopError('Workspace not found');
  return row;
}

const MOVABLE: Workspace['status'][] = ['active', 'suspended'];

/** Before the switch a move stops as soon as its workspace is deleted (or otherwise no longer movable): its copy is dropped by the abort. */
async function stillMovable(services: Services, ref: MoveRef): Promise<Workspace> {
  const row = await workspaceRow(services, ref.workspaceId);
  if (row.move?.id !== ref.moveId) throw new MoveStopError('Workspace is no longer moving');
  if (!MOVABLE.includes(row.status)) throw new MoveStopError(`Workspace is ${row.status}`);
  return row;
}

const setStep = (services: Services, ref: MoveRef, step: MoveStep, extra: Partial<MoveRow> = {}) =>
  moveCollections(services).moves.updateOne({ _id: ref.moveId }, { $set: { step, ...extra, updatedAt: services.clock.now() } });

/**
 * Every process routes the workspace by its new placement (and drops the row it held) before this
 * returns: the placement rides on the change itself, acknowledged like a suspension (docs/access.md).
 */
export async function publishPlacement(
  services: Services,
  workspace: Pick<Workspace, '_id' | 'dbName'>,
  cluster: string,
  move?: { id: string; state: MoveState },
) {
  const hosts = await workspaceHostNames(services, workspace._id);
  await services.changeFeed.publish([placementTopic(workspace.dbName, cluster, move), topics.workspace(workspace._id), ...hosts.map(topics.host)]);
}

/**
 * Step 1: the row says the workspace moves (`move.state: copying`): from the acknowledgement on,
 * every write to it records what it touches. Only an active or suspended workspace that no backup
 * holds and no other move moves; a retry of the same move changes nothing.
 */
export async function beginMove(services: Services, ref: MoveRef): Promise<void> {
  const move = await moveRow(services, ref);
  if (move.state !== 'running') throw new MoveStopError(`Move is ${move.state}`);
  const { workspaces } = platformCollections(services);
  let row = await workspaceRow(services, ref.workspaceId);
  if (row.move?.id !== ref.moveId) {
    const marked = await workspaces.findOneAndUpdate(
      {
        _id: ref.workspaceId,
        status: { $in: MOVABLE },
        move: { $exists: false },
        $or: [{ writeHold: null }, { writeHold: { $exists: false } }],
      },
      { $set: { move: { id: ref.moveId, to: move.to, state: 'copying' }, updatedAt: services.clock.now() } },
      { returnDocument: 'after' },
    );
    if (!marked) throw new MoveStopError('Workspace is not active, or a backup holds it, or another move moves it');
    row = marked;
  }
  if (row.move?.state === 'copying') await publishPlacement(services, row, clusterOf(row), { id: ref.moveId, state: 'copying' });
}

/**
 * Step 2: every collection (GridFS buckets are two collections each) copied to the target with its
 * indexes, while writes run. A retry skips the collections recorded as copied.
 */
export async function copyData(services: Services, ref: MoveRef, beat: Beat): Promise<void> {
  const move = await moveRow(services, ref);
  if (move.step !== 'copying') return;
  const row = await workspaceRow(services, ref.workspaceId);
  const source = services.placement.on(move.from, row.dbName);
  const target = services.placement.on(move.to, row.dbName);
  const names = await collectionNames(source);
  await setStep(services, ref, 'copying', { 'progress.collections': names.length } as Partial<MoveRow>);
  for (const name of names) {
    if (move.copied.includes(name)) continue;
    await stillMovable(services, ref);
    await prepareCollection(source, target, name);
    const documents = await syncCollection(source, target, name, beat);
    await moveCollections(services).moves.updateOne(
      { _id: ref.moveId, copied: { $ne: name } },
      { $addToSet: { copied: name }, $inc: { 'progress.collectionsDone': 1, 'progress.documents': documents }, $set: { updatedAt: services.clock.now() } },
    );
  }
  await setStep(services, ref, 'catching-up');
}

/**
 * Copies again what the recorded changes name (the final pass also those whose write never said it
 * finished), then forgets them. Answers how many were applied.
 */
async function applyChanges(services: Services, ref: MoveRef, final: boolean, beat: Beat): Promise<{ applied: number; touched: Set<string> }> {
  const move = await moveRow(services, ref);
  const row = await workspaceRow(services, ref.workspaceId);
  const source = services.placement.on(move.from, row.dbName);
  const target = services.placement.on(move.to, row.dbName);
  const { changes } = moveCollections(services);
  let applied = 0;
  const touched = new Set<string>();
  for (let batch = 0; final || batch < PASS_BATCHES; batch++) {
    if (!final) await stillMovable(services, ref);
    const recorded = await changes
      .find(final ? { moveId: ref.moveId } : { moveId: ref.moveId, pending: false })
      .sort({ _id: 1 })
      .limit(CHANGE_BATCH)
      .toArray();
    if (recorded.length === 0) break;
    const whole = new Set<string>();
    const byCollection = new Map<string, unknown[]>();
    for (const change of recorded) {
      touched.add(change.collection);
      if (change.ids === null || change.collection === '*') whole.add(change.collection);
      else byCollection.set(change.collection, [...(byCollection.get(change.collection) ?? []), ...change.ids]);
    }
    if (whole.has('*')) {
      const names = new Set([...(await collectionNames(source)), ...(await collectionNames(target))]);
      for (const name of names) {
        await prepareCollection(source, target, name).catch(() => undefined);
        await syncCollection(source, target, name, beat);
      }
    } else {
      for (const name of whole) {
        await prepareCollection(source, target, name);
        await syncCollection(source, target, name, beat);
      }
      for (const [name, ids] of byCollection) {
        if (whole.has(name)) continue;
        await prepareCollection(source, target, name);
        await syncDocuments(source, target, name, ids, beat);
      }
    }
    await changes.deleteMany({ _id: { $in: recorded.map((change) => change._id) } });
    applied += recorded.length;
  }
  await moveCollections(services).moves.updateOne(
    { _id: ref.moveId },
    { $inc: { 'progress.catchUpPasses': 1, 'progress.changesApplied': applied }, $set: { updatedAt: services.clock.now() } },
  );
  return { applied, touched };
}

/** Step 3 (repeated): a catch-up pass while writes run. */
export async function catchUp(services: Services, ref: MoveRef, beat: Beat): Promise<number> {
  const move = await moveRow(services, ref);
  if (move.step !== 'catching-up') return 0;
  return (await applyChanges(services, ref, false, beat)).applied;
}

/**
 * Step 4: writes refused (operations 423, other writes wait; `move.state: switching`, acknowledged
 * by every process), then the switch itself (step 5).
 */
export async function freezeWrites(services: Services, ref: MoveRef, beat: Beat): Promise<void> {
  const move = await moveRow(services, ref);
  if (move.step !== 'catching-up' && move.step !== 'switching') return;
  const row = await stillMovable(services, ref);
  if (move.step === 'catching-up') {
    // Counted while writes still run, so the switch compares only what changed since: a collection
    // equal now and not written after is still equal (every write after this is recorded).
    const unverified = await countDifferences(services.placement.on(move.from, row.dbName), services.placement.on(move.to, row.dbName));
    await setStep(services, ref, 'switching', { switchStartedAt: services.clock.now(), unverified: unverified.map((d) => d.name) });
  }
  if (row.move!.state === 'copying') {
    // Conditional on the status, as a deletion's start is on the switch (deletion.ts): one of the two wins.
    const frozen = await platformCollections(services).workspaces.updateOne(
      { _id: ref.workspaceId, 'move.id': ref.moveId, status: { $in: MOVABLE } },
      { $set: { 'move.state': 'switching', updatedAt: services.clock.now() } },
    );
    if (frozen.matchedCount === 0) throw new MoveStopError('Workspace is no longer active or suspended');
  }
  const published = Date.now();
  await publishPlacement(services, row, clusterOf(row), { id: ref.moveId, state: 'switching' });
  await moveCollections(services).moves.updateOne({ _id: ref.moveId }, { $set: { 'switchTimings.freezeMs': Date.now() - published } });
  // The switch goes on in the same activity: no round trip through Temporal while writes are refused
  // (the workflow's finishSwitch then finds it done; after a crash it finishes it).
  await finishSwitch(services, ref, beat);
}

/**
 * Step 5, writes refused: the drain (until no recorded write is in flight, at most MOVE_DRAIN_MS),
 * the final catch-up, the counts of every collection compared, then the row names the new
 * cluster and every process routes there (waiting writes go on, on the target).
 */
export async function finishSwitch(services: Services, ref: MoveRef, beat: Beat): Promise<void> {
  const move = await moveRow(services, ref);
  if (move.step !== 'switching') return;
  const row = await workspaceRow(services, ref.workspaceId);
  if (row.move?.id !== ref.moveId) throw new MoveStopError('Workspace is no longer moving');
  if (row.move.state === 'switching') {
    const { changes } = moveCollections(services);
    const timings: Record<string, number> = {};
    let at = Date.now();
    const lap = (name: string) => {
      timings[name] = Date.now() - at;
      at = Date.now();
    };
    const drainEnd = Date.now() + MOVE_DRAIN_MS;
    while (Date.now() < drainEnd && (await changes.findOne({ moveId: ref.moveId, pending: true }, { projection: { _id: 1 } }))) await sleep(25);
    lap('drainMs');
    // A retried switch may have forgotten what an earlier attempt's final pass copied: it compares everything.
    const retried = move.finalPassStarted === true;
    await moveCollections(services).moves.updateOne({ _id: ref.moveId }, { $set: { finalPassStarted: true } });
    const { touched } = await applyChanges(services, ref, true, beat);
    lap('catchUpMs');
    const names = retried || !move.unverified || touched.has('*') ? undefined : [...new Set([...move.unverified, ...touched])];
    const differ = await countDifferences(services.placement.on(move.from, row.dbName), services.placement.on(move.to, row.dbName), names, true);
    if (differ.length) throw new MoveStopError(`The copy does not verify: ${differ.map((d) => d.text).join(', ')}`);
    lap('verifyMs');
    await platformCollections(services).workspaces.updateOne(
      { _id: ref.workspaceId, 'move.id': ref.moveId },
      move.to === DEFAULT_CLUSTER
        ? { $set: { 'move.state': 'switched', updatedAt: services.clock.now() }, $unset: { cluster: '' } }
        : { $set: { cluster: move.to, 'move.state': 'switched', updatedAt: services.clock.now() } },
    );
    await publishPlacement(services, row, move.to, { id: ref.moveId, state: 'switched' });
    lap('switchMs');
    const recorded = Object.fromEntries(Object.entries(timings).map(([name, ms]) => [`switchTimings.${name}`, ms]));
    await moveCollections(services).moves.updateOne({ _id: ref.moveId }, { $set: recorded });
  } else await publishPlacement(services, row, move.to, { id: ref.moveId, state: 'switched' });
  await setStep(services, ref, 'cleaning', { switchEndedAt: services.clock.now() });
}

/** Step 6: the source dropped (after in-flight reads finished), the row's move and the records forgotten. */
export async function cleanUp(services: Services, ref: MoveRef): Promise<void> {
  const move = await moveRow(services, ref);
  if (move.step !== 'cleaning') return;
  const row = await workspaceRow(services, ref.workspaceId);
  await sleep(SOURCE_GRACE_MS);
  if (clusterOf(row) === move.to && move.from !== move.to) await services.placement.on(move.from, row.dbName).dropDatabase();
  await platformCollections(services).workspaces.updateOne({ _id: ref.workspaceId, 'move.id': ref.moveId }, { $unset: { move: '' } });
  await publishPlacement(services, row, move.to);
  await moveCollections(services).changes.deleteMany({ moveId: ref.moveId });
  const now = services.clock.now();
  await moveCollections(services).moves.updateOne({ _id: ref.moveId }, { $set: { step: 'done', state: 'succeeded', finishedAt: now, updatedAt: now } });
}

/**
 * A move that cannot finish: before the switch the workspace stays where it was (its row's move
 * cleared, the target's copy dropped); after it, it stays on the target with the source kept.
 */
export async function abortMove(services: Services, ref: MoveRef, error: string): Promise<void> {
  const move = await moveRow(services, ref);
  if (move.state !== 'running') return;
  const row = await platformCollections(services).workspaces.findOne({ _id: ref.workspaceId });
  if (row?.move?.id === ref.moveId) {
    const switched = row.move.state === 'switched';
    await platformCollections(services).workspaces.updateOne({ _id: ref.workspaceId, 'move.id': ref.moveId }, { $unset: { move: '' } });
    await publishPlacement(services, row, clusterOf(row));
    if (!switched && move.to !== clusterOf(row)) await services.placement.on(move.to, row.dbName).dropDatabase();
  }
  await moveCollections(services).changes.deleteMany({ moveId: ref.moveId });
  const now = services.clock.now();
  await moveCollections(services).moves.updateOne(
    { _id: ref.moveId },
    { $set: { state: 'failed', error, ...(move.switchStartedAt && !move.switchEndedAt ? { switchEndedAt: now } : {}), finishedAt: now, updatedAt: now } },
  );
}
