import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MongoClient } from 'mongodb';
import { startWorld } from '../support/world.ts';
import { initialPasswordFile } from '../../services/platform/bootstrap.ts';

const dirs: string[] = [];
const children: ChildProcess[] = [];
const prefixes: string[] = [];
const mongoUri = process.env.MONGODB_URI ?? 'mongodb://127.0.0.1:27117';

afterAll(async () => {
  // Dropping a database a gateway still writes to trips the local engine ("Map … is closed"): wait for them to exit.
  await Promise.all(
    children
      .filter((child) => child.exitCode === null && child.signalCode === null)
      .map((child) => new Promise((exited) => child.once('exit', exited).kill('SIGTERM'))),
  );
  const client = await MongoClient.connect(mongoUri);
  try {
    const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
    for (const { name } of databases) if (prefixes.some((p) => name.startsWith(p))) await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** The real gateway entry (services/gateway.ts) on loopback, its whole output kept. */
function startGateway(env: Record<string, string>): Promise<{ child: ChildProcess; output: () => string; address: string }> {
  const base = { ...process.env };
  delete base.ADMIN_PASSWORD;
  delete base.ADMIN_EMAIL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/gateway.ts'], {
    env: { ...base, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'debug', NODE_ENV: 'test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (out += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${out}`)), 60_000);
    const check = () => {
      const line = out.split('\n').find((l) => l.includes('gateway listening'));
      if (!line) return;
      clearTimeout(timer);
      resolve({ child, output: () => out, address: JSON.parse(line).address as string });
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`gateway exited ${code}:\n${out}`)));
  });
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM'))));

describe('the generated administrator password', { timeout: 120_000 }, () => {
  it('goes to DATA_DIR/initial-admin-password (0600), never to the output; it signs in', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bootstrap-'));
    dirs.push(dataDir);
    const prefix = `t${randomBytes(4).toString('hex')}_`;
    prefixes.push(prefix);
    const env = { DATA_DIR: dataDir, DB_PREFIX: prefix, SECRET_KEY: randomBytes(32).toString('hex'), TEMPORAL_TASK_QUEUE: `test-${prefix}` };
    const gateway = await startGateway(env);

    const file = initialPasswordFile(dataDir);
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const password = readFileSync(file, 'utf8').trim();
    expect(password.length).toBeGreaterThanOrEqual(20);
    const output = gateway.output();
    expect(output).not.toContain(password);
    const created = output.split('\n').find((l) => l.includes('administrator created'));
    expect(created, output).toBeDefined();
    expect(JSON.parse(created!)).toMatchObject({ email: 'admin@localhost.test', passwordFile: file });

    // The file holds the real password: it signs in over loopback.
    const login = await fetch(`${gateway.address}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gateway.address },
      body: JSON.stringify({ email: 'admin@localhost.test', password }),
    });
    expect(login.status).toBe(200);
    await stop(gateway.child);
    // Nothing printed while stopping carries it either.
    expect(gateway.output()).not.toContain(password);

    // A second start reuses the administrator: no new password, the file untouched.
    const again = await startGateway(env);
    expect(readFileSync(file, 'utf8').trim()).toBe(password);
    expect(again.output()).not.toContain('administrator created');
    await stop(again.child);
  });

  it('ADMIN_PASSWORD still sets it, and then no file is written', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bootstrap-'));
    dirs.push(dataDir);
    const world = await startWorld({ env: { DATA_DIR: dataDir } });
    try {
      expect(existsSync(initialPasswordFile(dataDir))).toBe(false);
      const login = await world.app.inject({ method: 'POST', url: '/api/auth/login', headers: { origin: 'http://localhost' }, payload: world.admin });
      expect(login.statusCode).toBe(200);
    } finally {
      await world.close();
    }
  });
});
