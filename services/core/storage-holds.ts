/**
 * The runs that need an AsyncLocalStorage enabled, counted; `idle` is called when the last one is
 * over (it disables the storage). Enabled, a storage makes Node 20 run a hook for every promise the
 * process makes, so a storage is enabled only while something needs it: the gateway's trace context
 * (`HeldContextManager`, tracing.ts) and the Temporal client's call context (`boundedTemporalCalls`,
 * engines.ts). bench/RESULTS.md, sessions 12 and 13.
 */
export class StorageHolds {
  private open = 0;

  constructor(private readonly idle: () => void) {}

  /** Whether no run holds the storage. */
  get none(): boolean {
    return this.open === 0;
  }

  /** Takes a hold; the release it returns may be called more than once. */
  hold(): () => void {
    this.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.open === 0) this.idle();
    };
  }
}
