/** Injected so tests can move time (key expiry, schedules) without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
