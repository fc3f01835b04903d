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
  /** false: the MongoDB engine runs without its oplog (no change streams). Default true. */
  oplog?: boolean;
}
export function ensureEngines(options?: EngineOptions): Promise<{ mongoUri: string; temporalAddress: string; temporalNamespace: string }>;
export function stopEngines(options?: { dataDir?: string; log?: (...args: unknown[]) => void }): Promise<void>;
export function engineStatus(options?: { dataDir?: string; mongoPort?: number; temporalPort?: number; temporalHttpPort?: number }): Promise<unknown>;
