export const SCHEMATHESIS_VERSION: string;
export function ensureSchemathesis(log?: (line: string) => void): string;
