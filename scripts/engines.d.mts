export interface EngineOptions {
  dataDir?: string;
  engineDir?: string;
  mongoPort?: number;
  temporalPort?: number;
  log?: (...args: unknown[]) => void;
}
export function ensureEngines(options?: EngineOptions): Promise<{ mongoUri: string; temporalAddress: string; temporalNamespace: string }>;
export function stopEngines(options?: { dataDir?: string }): Promise<void>;
