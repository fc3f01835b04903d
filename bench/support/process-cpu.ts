import fs from 'node:fs';

/** CPU time (user + system, ms) a process has spent, from Linux /proc: what a unit of work costs whatever the machine's load. */
export function processCpuMs(pid: number | null | undefined): number {
  if (!pid) return 0;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in clock ticks of 10 ms
  } catch {
    return 0; // gone, or no /proc
  }
}

/** The local MongoDB engine serving MONGODB_URI (found by its launcher's port), or null when it names another server. */
export function enginePidOf(uri = process.env.MONGODB_URI ?? 'mongodb://127.0.0.1:27117'): number | null {
  const port = new URL(uri).port;
  for (const entry of fs.existsSync('/proc') ? fs.readdirSync('/proc') : []) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv.includes('Launcher') && argv.includes(port)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}
