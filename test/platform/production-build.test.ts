import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { builtinModules } from 'node:module';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey } from '../support/access.ts';
import { eventually } from '../support/polling.ts';
import { startReceiver } from '../events/support.ts';
import { startEntry, stopEntry, worldEnv, type Running } from '../support/entry-process.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';
import { WORKER_ENV, WORKER_NODE_FLAGS } from '../../scripts/worker-node-flags.mjs';

const ROOT = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
  // Continuation lines joined: one instruction per line.
  .replace(/\\\n\s*/g, ' ')
  .split('\n')
  .filter((line) => line.trim() && !line.startsWith('#'));
const instructions = (name: string) => dockerfile.filter((line) => line.startsWith(`${name} `)).map((line) => line.slice(name.length + 1).trim());
const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { command?: string[]; build?: unknown; environment?: Record<string, string> }>;
};

const files = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));

/**
 * The image's layout, built here: `app/` holds `dist/` (`npm run build --out-dir`) and the
 * dependencies, as /app does in the runtime stage.
 */
describe('the production build: compiled gateway and worker, run with plain node', { timeout: 600_000 }, () => {
  const app = mkdtempSync(join(tmpdir(), 'cwb-build-'));
  const dist = join(app, 'dist');
  const children: ChildProcess[] = [];
  let world: World;
  let hooks: Awaited<ReturnType<typeof startReceiver>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    symlinkSync(join(ROOT, 'node_modules'), join(app, 'node_modules'), 'dir');
    const build = spawn(process.execPath, ['scripts/build.mjs', '--out-dir', dist], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    build.stdout.on('data', (chunk) => (output += chunk));
    build.stderr.on('data', (chunk) => (output += chunk));
    const code = await new Promise<number | null>((done) => build.once('exit', done));
    if (code !== 0) throw new Error(`npm run build failed (${code}):\n${output}`);
    world = await startWorld({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    hooks = await startReceiver();
    env = {
      // Nothing loads TypeScript into the compiled processes (no tsx, no loader of the test runner).
      NODE_OPTIONS: '',
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: join(app, 'data'),
      ...worldEnv(world),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    };
  }, 600_000);

  afterAll(async () => {
    await Promise.all(children.map(stopEntry));
    await hooks?.close();
    await world?.close();
    rmSync(app, { recursive: true, force: true });
  });

  it('holds every path the Dockerfile copies and runs, its assets, and imports only production dependencies', async () => {
    // The build stage's sources are in the context (and not left out by .dockerignore).
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line && !line.startsWith('#'));
    const copies = instructions('COPY');
    expect(copies.length).toBeGreaterThan(5);
    for (const copy of copies.filter((c) => !c.startsWith('--from='))) {
      for (const source of copy.split(/\s+/).slice(0, -1)) {
        expect(existsSync(join(ROOT, source)), source).toBe(true);
        expect(ignored, source).not.toContain(source.split('/')[0]);
      }
    }
    // What the build stage runs imports only what it copied.
    const copied = copies.filter((c) => !c.startsWith('--from=')).flatMap((c) => c.split(/\s+/).slice(0, -1));
    for (const script of copied.filter((source) => source.endsWith('.mjs'))) {
      for (const [, imported] of readFileSync(join(ROOT, script), 'utf8').matchAll(/from '(\.[^']+)'/g)) {
        expect(copied, `${script} imports ${imported}`).toContain(join(script, '..', imported));
      }
    }
    // The runtime stage takes the build's output: /app/<path> of the build stage is <app>/<path> here.
    const fromBuild = copies.filter((c) => c.startsWith('--from=build '));
    expect(fromBuild.length).toBeGreaterThan(0);
    for (const copy of fromBuild) expect(existsSync(join(app, relative('/app', copy.split(/\s+/)[1]))), copy).toBe(true);
    // Every command of the image and of docker-compose.yml runs a file of the build, with no TypeScript.
    const cmd = JSON.parse(instructions('CMD').at(-1)!) as string[];
    const commands = [cmd, ...Object.values(compose.services).flatMap((service) => (service.build ? [service.command ?? cmd] : []))];
    expect(commands.length).toBe(3);
    for (const command of commands) {
      expect(command[0]).toBe('node');
      expect(command.join(' ')).not.toMatch(/tsx|\.ts\b/);
      expect(existsSync(join(app, command.at(-1)!)), command.join(' ')).toBe(true);
    }
    expect(compose.services.worker.command).toEqual(['node', ...WORKER_NODE_FLAGS, 'dist/services/worker.js']);
    expect(compose.services.worker.environment).toMatchObject(WORKER_ENV);

    const built = files(dist);
    expect(built.filter((file) => file.endsWith('.ts'))).toEqual([]);
    // Files read at run time beside their module: every admin UI asset.
    for (const asset of readdirSync(join(ROOT, 'services/admin-ui')).filter((name) => name !== 'README.md')) {
      expect(existsSync(join(dist, 'services/admin-ui', asset)), asset).toBe(true);
    }
    // `npm ci --omit=dev` is enough: every package the compiled code imports is a production dependency.
    const builtins = new Set(builtinModules);
    const packages = new Set<string>();
    // The admin UI's files are browser modules served as assets, not code node runs.
    const nodeModules = built.filter((f) => f.endsWith('.js') && !f.endsWith('workflow-bundle.js') && !f.includes(`${join('services', 'admin-ui')}/`));
    // A specifier holds no whitespace: a string such as `['from'],\n  roles: [` is data, not an import.
    for (const file of nodeModules) {
      const source = readFileSync(file, 'utf8');
      for (const [, specifier] of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire(?:\.resolve)?\(\s*|\.resolve\(\s*)['"]([^'"./\s][^'"\s]*)['"]/g)) {
        if (specifier.startsWith('node:') || builtins.has(specifier)) continue;
        packages.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]);
      }
    }
    expect(packages.size).toBeGreaterThan(10);
    expect([...packages].filter((name) => !(name in pkg.dependencies))).toEqual([]);
    expect(pkg.dependencies).not.toHaveProperty('tsx');

    // The compiled worker finds the bundle the build made; from source there is none.
    const bundleModule = await import(pathToFileURL(join(dist, 'services/workflow-bundle.js')).href);
    expect(bundleModule.builtWorkflowBundle()).toEqual({ codePath: join(dist, 'workflow-bundle.js') });
    expect(bundleModule.workflowsPath).toBe(join(dist, 'workflows/index.js'));
    const sourceModule = await import('../../services/workflow-bundle.ts');
    expect(sourceModule.builtWorkflowBundle()).toBeUndefined();
  });

  it('the compiled gateway and worker start and serve: a public read, both probes, the image healthcheck, a webhook delivered by the worker', async () => {
    const [gateway, worker]: Running[] = await Promise.all([
      startEntry(children, ['dist/services/gateway.js'], env, ['gateway listening'], { cwd: app }),
      startEntry(
        children,
        [...WORKER_NODE_FLAGS, 'dist/services/worker.js'],
        { ...env, ...WORKER_ENV, WORKER_HEALTH_PORT: '0' },
        ['worker running', 'worker probes listening'],
        {
          cwd: app,
        },
      ),
    ]);
    const base = gateway.line('gateway listening').address as string;
    const probes = worker.line('worker probes listening').address as string;

    const list = await fetch(`${base}/api/v1/content`);
    expect(list.status).toBe(200);
    expect(await list.json()).toMatchObject({ items: [] });
    expect((await fetch(`${base}/admin`)).status).toBe(200);
    expect(await (await fetch(`${base}/livez`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', clusters: { default: 'up' } });
    // The worker is ready once it polls.
    await eventually(async () => (await fetch(`${probes}/readyz`)).status === 200, 'the worker ready', 30_000, 250);
    expect(await (await fetch(`${probes}/livez`)).json()).toEqual({ status: 'ok' });
    expect((await fetch(`${probes}/metrics`)).status).toBe(404);

    // The image's HEALTHCHECK command, as Docker runs it in each container.
    const healthcheck = JSON.parse(instructions('HEALTHCHECK')[0].replace(/^.*?CMD\s+/, '')) as string[];
    const portOf = (address: string) => new URL(address).port;
    for (const containerEnv of [{ PORT: portOf(base) }, { PORT: '3000', WORKER_HEALTH_PORT: portOf(probes) }]) {
      const run = spawnSync(healthcheck[0] === 'node' ? process.execPath : healthcheck[0], healthcheck.slice(1), {
        env: { PATH: process.env.PATH, ...containerEnv },
        timeout: 10_000,
      });
      expect(run.status, `${JSON.stringify(containerEnv)}: ${run.stderr}`).toBe(0);
    }

    // A write whose event the compiled worker delivers (workflow and activity from the prebuilt bundle).
    const { key } = await createApiKey(world, { capabilities: [...CAPABILITIES] });
    const bearer = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const endpoint = await fetch(`${base}/api/manage/v1/webhooks`, {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify({ name: 'compiled', url: hooks.url, events: ['content.created'] }),
    });
    expect(endpoint.status, await endpoint.clone().text()).toBe(201);
    const created = await fetch(`${base}/api/manage/v1/content`, {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify({ title: 'Compiled', slug: 'compiled', status: 'published' }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const entryId = (await created.json()).id as string;
    await eventually(() => hooks.received.length >= 1, 'the webhook delivery by the compiled worker', 60_000);
    expect(JSON.parse(hooks.received[0].body)).toMatchObject({ event: 'content.created' });
    expect(hooks.received[0].body).toContain(entryId);
  });
});
