export const WORKER_NODE_FLAGS: string[];
export const WORKER_ENV: Record<string, string>;
