// Breaks workflows-are-deterministic twice (a Node built-in, a value import of service code);
// the type-only import is allowed.
import { randomUUID } from 'node:crypto';
import { pure } from '../services/core/pure.ts';
import type { upward } from '../services/core/upward.ts';

export const wf = (): [string, number, typeof upward | undefined] => [randomUUID(), pure, undefined];
