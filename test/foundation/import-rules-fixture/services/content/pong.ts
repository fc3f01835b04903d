import { ping } from './ping.ts';

export const pong = () => ping;
