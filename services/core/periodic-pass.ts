import type { Logger } from 'pino';

export interface PeriodicPass {
  /** Stops the timer and waits for the pass in flight, so no call of it outlives its connections. */
  stop(): Promise<void>;
}

/**
 * Runs `pass` at once, then every `intervalMs`, never two at a time; never keeps the process
 * alive. A failed pass is logged (unless stopping) and the next tick tries again.
 */
export function startPeriodicPass(name: string, intervalMs: number, log: Logger, pass: () => Promise<unknown>): PeriodicPass {
  let running: Promise<unknown> | null = null;
  let stopped = false;
  const tick = () => {
    if (running || stopped) return;
    running = pass()
      .catch((error: unknown) => {
        if (!stopped) log.warn({ err: error instanceof Error ? error.message : String(error) }, `${name} failed`);
      })
      .finally(() => (running = null));
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  const boot = setTimeout(tick, 0);
  boot.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(boot);
      await running;
    },
  };
}
