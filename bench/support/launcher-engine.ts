import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * Installs (or rebuilds) the local MongoDB engine through scripts/engines.mjs and answers the
 * classpath of its launcher (engines/mongo/Launcher.java), from `ENGINE_DIR` or the repository's `.engines`.
 */
export function installLauncher(): string {
  execFileSync(process.execPath, [path.join(root, 'scripts/engines.mjs'), 'install'], { stdio: 'inherit' });
  const engineDir = process.env.ENGINE_DIR ?? path.join(root, '.engines');
  return [path.join(engineDir, 'mongo/classes'), path.join(engineDir, 'mongo/lib/*')].join(path.delimiter);
}

/**
 * The launcher started directly, for the benches that measure the engine itself, with the JVM
 * flags the engines script gives it; `jvm` adds JVM options, `args` launcher arguments. Answers once it says READY.
 */
export async function startLauncher(
  classpath: string,
  options: { port: number; file: string; heap?: string; jvm?: string[]; args?: string[] },
): Promise<ChildProcess> {
  const args = [
    `-Xmx${options.heap ?? '512m'}`,
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    ...(options.jvm ?? []),
    '-cp',
    classpath,
    'Launcher',
    String(options.port),
    options.file,
    '--no-oplog',
    ...(options.args ?? []),
  ];
  const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => String(chunk).includes('READY') && resolve());
    child.on('exit', (code) => reject(new Error(`engine exited ${code}`)));
  });
  return child;
}

export const stopLauncher = (child: ChildProcess) => new Promise<void>((resolve) => (child.on('exit', () => resolve()), child.kill('SIGTERM')));
