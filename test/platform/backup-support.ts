import { SITE_CONFIG_COLLECTION } from '../../services/core/site-config.ts';
import { afterAll, beforeAll } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Binary, Decimal128, GridFSBucket, Int32, Long, ObjectId, BSON, type Db } from 'mongodb';
import type { LightMyRequestResponse } from 'fastify';
import { startWorld, addLocalWorkspace, type World, type WorldOptions } from '../support/world.ts';
import { eventually } from '../support/polling.ts';
import { keyOnHost, operatorCaller, tenantAdmin } from './support.ts';
import { multipartBody, pdfOfSize } from '../media/support.ts';
import type { ChildProcess } from 'node:child_process';
import { kill9, spawnWorkerProcess } from '../support/worker-process.ts';
import { cloneLeftBehind } from '../../services/platform/backup/clone-fixups.ts';
import { features } from '../../services/features.ts';
import { SITE_STATE_COLLECTION, siteStateKindRange } from '../../services/core/site-state.ts';

export type OperatorCall = (method: string, url: string, payload?: unknown) => Promise<LightMyRequestResponse>;

export interface BackupWorld {
  world: World;
  call: OperatorCall;
  backupDir: string;
}

export async function startBackupWorld(options: WorldOptions = {}): Promise<BackupWorld> {
  const backupDir = mkdtempSync(join(tmpdir(), 'cwb-backups-'));
  const world = await startWorld({ ...options, env: { BACKUP_DIR: backupDir, ...options.env } });
  return { world, call: await operatorCaller(world), backupDir };
}

export interface Seeded {
  workspaceId: string;
  siteId: string;
  host: string;
  dbName: string;
  key: string;
  /** A Management API call on the seeded workspace's host. */
  manage(method: string, url: string, payload?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
}

/** A workspace with entries, media uploaded through the API (one bigger than a GridFS chunk) and documents of every lossy-in-JSON BSON type. */
export async function seedWorkspace(world: World, host: string, { entries = 12, mediaBytes = [700_000, 3000] } = {}): Promise<Seeded> {
  const { workspaceId, siteId } = await addLocalWorkspace(world, host, tenantAdmin);
  const key = await keyOnHost(world, host, [
    'content:read',
    'content:create',
    'content:update',
    'content:delete',
    'content:publish',
    'media:read',
    'media:upload',
    'media:delete',
  ]);
  const manage: Seeded['manage'] = (method, url, payload, headers = {}) =>
    world.app.inject({
      method: method as never,
      url: `/api/manage/v1${url}`,
      headers: { authorization: `Bearer ${key}`, host, ...headers },
      payload: payload as never,
    });
  for (let i = 0; i < entries; i++) {
    const res = await manage('POST', '/content', { title: `Entry ${i}`, status: i % 2 ? 'published' : 'draft' });
    if (res.statusCode !== 201) throw new Error(`entry: ${res.statusCode} ${res.body}`);
  }
  for (const [i, size] of mediaBytes.entries()) {
    const body = multipartBody(`file-${i}.pdf`, pdfOfSize(size), 'application/pdf');
    const res = await manage('POST', '/media', body.payload, body.headers);
    if (res.statusCode !== 201) throw new Error(`media: ${res.statusCode} ${res.body}`);
  }
  const dbName = `${world.config.DB_PREFIX}ws_${workspaceId}`;
  await world.services.mongo
    .db(dbName)
    .collection<{ _id: ObjectId | string; [field: string]: unknown }>('backup_types')
    .insertMany([
      {
        _id: new ObjectId(),
        siteId,
        at: new Date(1_700_000_000_123),
        bin: new Binary(randomBytes(40)),
        int: new Int32(7),
        long: Long.fromString('9007199254740993'),
        dec: Decimal128.fromString('1.10'),
        dbl: 2.0,
        nested: { list: [1, 'two', null] },
      },
      { _id: 'text-id', siteId, uuid: new Binary(randomBytes(16), 4), empty: {} },
    ]);
  return { workspaceId, siteId, host, dbName, key, manage };
}

/** Left out of the comparison: counters a restore moves on purpose (above what caches saw: the public generation, the access version). */
const MOVED = { [SITE_STATE_COLLECTION]: ['generation', 'accessVersion'] } as Record<string, string[]>;

/**
 * Written by the worker's own passes at any time: rate counters pruned by the access retention pass
 * once their minute has passed; the search postings a new worker's backfill writes at its boot
 * (content/search-index.ts); the entry counters its recount writes at its boot (content/entry-counts.ts).
 */
const PRUNED = new Set(['rate_counters', 'search_terms']);
const PRUNED_STATE = siteStateKindRange('entries')._id.$gte;

/**
 * The whole database as canonical EJSON lines per collection, sorted (GridFS chunks left out: a
 * restore writes them with new ids; `mediaDigests` compares the bytes instead). `site_config`'s
 * documents are listed under their kind's name (core/site-config.ts), as the collection they had:
 * what a clone leaves behind or fixes is named by kind.
 */
export async function dumpDatabase(db: Db): Promise<Record<string, string[]>> {
  const dump: Record<string, string[]> = {};
  for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
    if (name.endsWith('.chunks') || name.startsWith('system.') || PRUNED.has(name)) continue;
    const docs = (await db.collection(name).find({}).toArray()).filter((doc) => name !== SITE_STATE_COLLECTION || !String(doc._id).startsWith(PRUNED_STATE));
    for (const doc of docs) {
      for (const field of MOVED[name] ?? []) delete doc[field];
      const key = name === SITE_CONFIG_COLLECTION ? String(doc._c) : name;
      (dump[key] ??= []).push(BSON.EJSON.stringify(doc, { relaxed: false }));
    }
  }
  for (const lines of Object.values(dump)) lines.sort();
  return dump;
}

/** Every collection's indexes (name → key and options, `_id` included), chunk collections too: a restore keeps them. */
export async function indexSpecs(db: Db): Promise<Record<string, string[]>> {
  const specs: Record<string, string[]> = {};
  for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
    if (name.startsWith('system.')) continue;
    const indexes = await db.collection(name).listIndexes().toArray();
    specs[name] = indexes.map(({ v: _v, ns: _ns, ...spec }) => JSON.stringify(spec)).sort();
  }
  return specs;
}

/** sha256 and size of every file of the media bucket, by id. */
export async function mediaDigests(db: Db, bucketName = 'media_files'): Promise<Record<string, string>> {
  const bucket = new GridFSBucket(db, { bucketName });
  const out: Record<string, string> = {};
  for (const file of await db.collection(`${bucketName}.files`).find({}).toArray()) {
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of bucket.openDownloadStream(file._id) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      bytes += chunk.length;
    }
    out[String(file._id)] = `${bytes}:${hash.digest('hex')}`;
  }
  return out;
}

export async function waitForState(call: OperatorCall, url: string, field: 'backup' | 'restore', states: string[], ms = 120_000) {
  return eventually(
    async () => {
      const res = await call('GET', url);
      const body = res.json()[field];
      return states.includes(body.state) ? body : null;
    },
    `${url} to reach ${states.join('|')}`,
    ms,
    100,
  );
}

/** Files of a POSIX tar (ustar headers, as services/export/archive.ts writes them). */
export function untar(tar: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  let at = 0;
  let longName: string | null = null;
  while (at + 512 <= tar.length) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const field = (from: number, length: number) =>
      header
        .subarray(from, from + length)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12), 8);
    const type = field(156, 1);
    const prefix = field(345, 155);
    const body = tar.subarray(at + 512, at + 512 + size);
    if (type === 'x') longName = /path=(.*)\n/.exec(body.toString('utf8'))?.[1] ?? null;
    else {
      files.set(longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100)), Buffer.from(body));
      longName = null;
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/** Worker processes of a crash test, each killable with SIGKILL; `stopAll` ends those left. */
export function workerCrew(bw: BackupWorld, env: Record<string, string> = {}) {
  const children: ChildProcess[] = [];
  return {
    children,
    async spawn(): Promise<ChildProcess> {
      const child = await spawnWorkerProcess(bw.world.config, { BACKUP_DIR: bw.backupDir, ...env });
      children.push(child);
      return child;
    },
    async stopAll(): Promise<void> {
      for (const child of children) await kill9(child);
    },
  };
}

export interface CrashWorld {
  bw: BackupWorld;
  s: Seeded;
  crew: ReturnType<typeof workerCrew>;
}

/**
 * A crash test's world, set up before its tests and closed after them: no in-process worker (only
 * the crew's child processes work, so a test can kill them) and a workspace on `host` with `files`
 * bulk media files, enough that the work is still running when a worker is killed.
 */
export function useCrashWorld(host: string, files: number): CrashWorld {
  const crash = {} as CrashWorld;
  beforeAll(async () => {
    crash.bw = await startBackupWorld();
    crash.crew = workerCrew(crash.bw);
    crash.s = await seedWorkspace(crash.bw.world, host, { entries: 5, mediaBytes: [5000] });
    await addBulkMedia(crash.bw.world, crash.s.dbName, files);
  }, 180_000);
  afterAll(async () => {
    await crash.crew?.stopAll();
    await crash.bw?.world.close();
  });
  return crash;
}

/** Adds `files` GridFS files of `bytes` random bytes (ids `bulk-<i>`): enough work that a kill lands mid-way. */
export async function addBulkMedia(world: World, dbName: string, files: number, bytes = 500_000): Promise<void> {
  const bucket = new GridFSBucket(world.services.mongo.db(dbName), { bucketName: 'media_files' });
  for (let i = 0; i < files; i++) {
    await new Promise((resolve, reject) =>
      bucket
        .openUploadStreamWithId(`bulk-${i}` as never, `bulk-${i}.bin`)
        .on('finish', resolve)
        .on('error', reject)
        .end(randomBytes(bytes)),
    );
  }
}

/** What the features let a clone copy (`Feature.clone.leftBehind`). */
export const CLONE_LEFT_BEHIND = cloneLeftBehind(features);

/** Collections a clone changes on purpose (their features' `clone.rewrite`): compared field by field instead. */
const CLONE_FIXED = new Set(['users', 'webhook_endpoints']);

/** The source's dump as its clone must hold it: its site id replaced, what a clone leaves behind or fixes left out. */
export function asCloned(dump: Record<string, string[]>, from: string, to: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, lines] of Object.entries(dump)) {
    if (CLONE_LEFT_BEHIND.has(name) || CLONE_FIXED.has(name)) continue;
    out[name] = lines.map((line) => line.split(from).join(to)).sort();
  }
  return out;
}

/** A clone's dump without the collections its fix-ups change. */
export const withoutFixed = (dump: Record<string, string[]>) => Object.fromEntries(Object.entries(dump).filter(([name]) => !CLONE_FIXED.has(name)));
