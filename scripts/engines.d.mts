export interface EngineOptions {
  dataDir?: string;
  engineDir?: string;
  mongoPort?: number;
  temporalPort?: number;
  temporalHttpPort?: number;
  temporalMetricsPort?: number;
  timeoutMs?: number;
  log?: (...args: unknown[]) => void;
}
export function ensureEngines(options?: EngineOptions): Promise<{ mongoUri: string; temporalAddress: string; temporalNamespace: string }>;
export function stopEngines(options?: { dataDir?: string; log?: (...args: unknown[]) => void }): Promise<void>;
export function engineStatus(options?: { dataDir?: string; mongoPort?: number; temporalPort?: number; temporalHttpPort?: number }): Promise<unknown>;
