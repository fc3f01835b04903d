import { readFileSync } from 'node:fs';

/** The package version, reported by diagnostics and OpenAPI. */
export const serviceVersion: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
