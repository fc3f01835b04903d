import type { LoggerOptions } from 'pino';

/** Paths that can carry secrets; pino replaces them before anything is written. */
export const redactedPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.secret',
  '*.key',
  '*.secretHash',
  '*.token',
  'headers.authorization',
  'headers.cookie',
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: redactedPaths, censor: '[redacted]' },
  };
}
