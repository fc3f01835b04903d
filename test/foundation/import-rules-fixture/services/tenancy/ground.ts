// Breaks tenancy-stands-on-core: the ground floor reaching up into a feature folder.
import { thing } from '../content/thing.ts';

export const ground = thing;
