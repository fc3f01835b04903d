// Breaks worker-serves-no-http: the worker entry reaching the HTTP folder (through a feature).
import { thing } from './content/thing.ts';

export const worker = thing;
