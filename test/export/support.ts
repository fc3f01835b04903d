import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, relative } from 'node:path';
import { expect } from 'vitest';
import type { Services, OperationContext } from '../../services/core/context.ts';
import { invokeOperation } from '../../services/core/operation.ts';
import type { PluginWorld } from '../plugins/support.ts';
import { exportIndex, exportManifest, exportPacks, exportRows, fromJson, readExportState } from '../../services/export/model.ts';
import { generations, livePacks } from '../../services/export/files.ts';
import { eventually } from '../support/polling.ts';

/** Runs an operation as the system principal (test setup that is not what the test is about). */
export async function call<T = Record<string, unknown>>(
  services: Services,
  ctx: OperationContext,
  id: string,
  input: Record<string, unknown> = {},
): Promise<T> {
  const operation = services.features.flatMap((f) => f.operations).find((op) => op.id === id);
  if (!operation) throw new Error(`no operation ${id}`);
  return (await invokeOperation(operation, ctx, input)) as T;
}

/** The served output of a site: path → run that wrote it. */
export async function liveFiles(ctx: OperationContext): Promise<Map<string, string>> {
  const live = (await readExportState(ctx.db, ctx.site._id))?.live;
  if (!live) return new Map();
  const ids = live.versions.map((version, bucket) => `${ctx.site._id}:${String(version).padStart(10, '0')}:${String(bucket).padStart(5, '0')}`);
  const buckets = await exportManifest(ctx.db)
    .find({ _id: { $in: ids } })
    .toArray();
  expect(buckets).toHaveLength(live.buckets);
  const files = buckets.flatMap((bucket) => fromJson(bucket.files)).sort((a, b) => a.path.localeCompare(b.path));
  return new Map(files.map((file) => [file.path, file.runId]));
}

/** The paths the archive would list, in its order (packs of the live output minus dead files). */
export async function archivedPaths(ctx: OperationContext): Promise<string[]> {
  const live = (await readExportState(ctx.db, ctx.site._id))?.live;
  if (!live) return [];
  const out: string[] = [];
  for await (const pack of livePacks(ctx.db, ctx.site._id, live, false)) out.push(...pack.files.map((file) => file.path));
  return out;
}

/** Documents a run wrote that are not (yet) part of the served output: packs, manifest, index, rows of later generations. */
export async function stagedDocs(ctx: OperationContext): Promise<number> {
  const live = (await readExportState(ctx.db, ctx.site._id))?.live?.generation ?? 0;
  const counts = await Promise.all(
    [exportPacks, exportManifest, exportIndex, exportRows].map((c) => c(ctx.db).countDocuments(generations(ctx.site._id, live + 1, null))),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/** Every export document of the site, live or not. */
export async function allDocs(ctx: OperationContext): Promise<number> {
  const counts = await Promise.all(
    [exportPacks, exportManifest, exportIndex, exportRows].map((c) => c(ctx.db).countDocuments(generations(ctx.site._id, 0, null))),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/** Starts a run through the Management API and waits until a finished run served it. */
export async function runToEnd(pw: PluginWorld, key: string, mode: string) {
  const res = await pw.manage('POST', '/static-export/run', key, { mode });
  expect(res.statusCode).toBe(202);
  const { requestId } = res.json();
  return eventually(
    async () => {
      const s = (await pw.manage('GET', '/static-export', key)).json();
      return s.lastRun?.requestIds.includes(requestId) && s.status === 'idle' ? s : undefined;
    },
    `export ${requestId}`,
    150_000,
  );
}

/** Unpacks a tar or tar.gz with the system's tar into a fresh folder. */
export function unpack(archive: Buffer, gz: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'export-unpacked-'));
  const path = `${dir}.${gz ? 'tar.gz' : 'tar'}`;
  writeFileSync(path, archive);
  execFileSync('tar', [gz ? '-xzf' : '-xf', path, '-C', dir]);
  return dir;
}

export function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else out.push(relative(root, full).split('\\').join('/'));
    }
  };
  walk(root);
  return out.sort();
}

/**
 * A link checker over an unpacked site: every `href`/`src` of every HTML file that stays inside
 * the site (relative or root-relative) must name a file, or a folder with an `index.html`. Answers
 * the broken links (empty = all resolve) and how many links were checked.
 */
export function checkLinks(root: string): { broken: string[]; checked: number; external: string[] } {
  const broken: string[] = [];
  const external: string[] = [];
  let checked = 0;
  for (const file of listFiles(root).filter((f) => f.endsWith('.html'))) {
    const html = readFileSync(join(root, file), 'utf8');
    for (const match of html.matchAll(/\s(?:href|src)="([^"]*)"/g)) {
      const raw = match[1].replace(/&amp;/g, '&');
      if (/^[a-z][a-z0-9+.-]*:/i.test(raw)) {
        external.push(raw);
        continue;
      }
      const target = raw.split('#')[0].split('?')[0];
      if (target === '') continue;
      const resolved = target.startsWith('/') ? target.slice(1) : posix.normalize(posix.join(posix.dirname(file), target));
      const path = decodeURIComponent(resolved);
      checked += 1;
      const full = join(root, path);
      const ok = (existsSync(full) && statSync(full).isFile()) || existsSync(join(full, 'index.html'));
      if (!ok || path.startsWith('..')) broken.push(`${file} → ${raw}`);
    }
  }
  return { broken, checked, external };
}
