import type { Clock } from '../../services/core/clock.ts';

/** A clock tests can move forward (key expiry, rate windows) without sleeping. */
export function movableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    advance(ms) {
      offset += ms;
    },
  };
}
