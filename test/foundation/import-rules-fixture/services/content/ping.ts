// Breaks no-circular (with pong.ts).
import { pong } from './pong.ts';

export const ping = () => pong;
