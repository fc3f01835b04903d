// Breaks core-is-the-ground-floor: core reaching up into a feature folder.
import { thing } from '../content/thing.ts';

export const upward = thing;
