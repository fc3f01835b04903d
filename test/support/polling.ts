type Falsy = undefined | null | false | 0 | '';

/**
 * The suite's one polling helper: calls `check` until it returns something truthy and returns
 * that, or fails after `timeoutMs` naming `what`. Tests wait on outcomes (a row, a status, a
 * received request), never on fixed sleeps, so a slow machine makes them slower, not red.
 */
export async function eventually<T>(check: () => T | Promise<T>, what: string, timeoutMs = 30_000, everyMs = 50): Promise<Exclude<T, Falsy>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, Falsy>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
