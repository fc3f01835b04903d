export interface EngineOptions {
  dataDir?: string;
  engineDir?: string;
  mongoPort?: number;
  temporalPort?: number;
  temporalHttpPort?: number;
  temporalMetricsPort?: number;
  timeoutMs?: number;
  log?: (...args: unknown[]) => void;
  /** Start (or check) this engine; false leaves it to somebody else (default true). */
  mongo?: boolean;
  temporal?: boolean;
  /** true: the MongoDB engine keeps an oplog (change streams). Default: only when STATE_FEED=change-stream. */
  oplog?: boolean;
}
export function ensureEngines(options?: EngineOptions): Promise<{ mongoUri: string; temporalAddress: string; temporalNamespace: string }>;
export function stopEngines(options?: { dataDir?: string; log?: (...args: unknown[]) => void }): Promise<void>;
export function engineStatus(options?: { dataDir?: string; mongoPort?: number; temporalPort?: number; temporalHttpPort?: number }): Promise<unknown>;
