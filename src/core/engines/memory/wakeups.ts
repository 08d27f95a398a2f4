/**
 * Long-poll wake-ups inside one process: a waiter registers the keys it waits
 * on (a partition, or a whole queue for pops without a partition) and is
 * called when an append touches one of them. Waiters re-check their own
 * condition; a wake-up only says "look again".
 */
export class Wakeups {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Registers `wake` under every key; returns the function that unregisters it. */
  register(keys: Iterable<string>, wake: () => void): () => void {
    const registered: string[] = [];
    for (const key of keys) {
      let set = this.waiters.get(key);
      if (!set) {
        set = new Set();
        this.waiters.set(key, set);
      }
      set.add(wake);
      registered.push(key);
    }
    return () => {
      for (const key of registered) {
        const set = this.waiters.get(key);
        set?.delete(wake);
        if (set?.size === 0) this.waiters.delete(key);
      }
    };
  }

  wake(key: string): void {
    const set = this.waiters.get(key);
    if (!set) return;
    for (const wake of [...set]) wake();
  }
}

export const partitionKey = (queue: string, index: number): string => `${queue}\u0000${index}`;
export const queueKey = (queue: string): string => `${queue}\u0000*`;
