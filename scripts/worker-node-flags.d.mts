export const WORKER_NODE_FLAGS: string[];
