/**
 * Work a process does once per key, such as creating a collection's indexes when a feature first
 * writes to it (collections created on first use, not at provisioning). Concurrent callers share
 * one run; a failed run is forgotten, so the next caller tries again.
 */
export interface FirstUse {
  once(key: string, work: () => Promise<void>): Promise<void>;
}

export function createFirstUse(): FirstUse {
  const runs = new Map<string, Promise<void>>();
  return {
    once(key, work) {
      let run = runs.get(key);
      if (!run) {
        run = work().catch((error: unknown) => {
          runs.delete(key);
          throw error;
        });
        runs.set(key, run);
      }
      return run;
    },
  };
}
