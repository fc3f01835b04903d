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

/** A clock that stands still (10 s into a minute) unless moved: rate windows never roll mid-test. */
export function pinnedClock(): Clock & { advance(ms: number): void } {
  let at = Math.floor(Date.now() / 60_000) * 60_000 + 10_000;
  return {
    now: () => new Date(at),
    advance(ms) {
      at += ms;
    },
  };
}
