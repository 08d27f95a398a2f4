/**
 * Queen's streaming clients close ripe windows from an idle-flush timer that
 * runs beside their main loop, each reading a partition's state and then
 * committing a cycle. When the two interleave on one partition the client
 * writes from a stale read: a flush that deletes and emits a window the main
 * loop has read and is adding to (the window is emitted twice), or a flush
 * that deletes a window the main loop added to after the flush read it (the
 * additions are lost). The server sees both reads and both commits, so it
 * keeps the order here and skips the stale flush: the window's rows stay, and
 * the next flush (or the main loop) closes it from what is stored.
 *
 * The other way round, a main-loop read made while a flush that passed
 * judgment is still committing would read the windows the flush is deleting
 * and add to them (the window emitted twice): that read waits for the flush's
 * commit.
 *
 * The main loop's read is the one of every key (no filter), at the start of
 * each cycle; the flush's is the one of ripe windows. Kept per core, in
 * memory: it guards a race of seconds, and a client talks to one gateway.
 */

/** A main-loop read older than this with no commit after it is taken as abandoned (the cycle failed). */
const ABANDONED_MS = 30_000;
/** Shards not touched for this long are forgotten. */
const IDLE_MS = 10 * 60_000;

interface ShardOrder {
  mainRead: number;
  mainReadAt: number;
  mainCommit: number;
  flushRead: number;
  touchedAt: number;
}

export class FlushGuard {
  private sequence = 0;
  private readonly shards = new Map<string, ShardOrder>();
  /** Flush cycles judged fresh and not yet committed, by shard. */
  private readonly flushes = new Map<string, Promise<void>>();
  private lastSweep = 0;

  constructor(private readonly clock: () => number) {}

  /** A state read: `flush` for the ripe-window read, `main` for the read of every key. */
  noteRead(shard: string, kind: 'flush' | 'main'): void {
    const order = this.order(shard);
    if (kind === 'flush') order.flushRead = ++this.sequence;
    else {
      order.mainRead = ++this.sequence;
      order.mainReadAt = this.clock();
    }
  }

  /** A committed cycle that acked source messages (the main loop's). */
  noteMainCommit(shard: string): void {
    this.order(shard).mainCommit = ++this.sequence;
  }

  /** A flush cycle judged fresh is committing: main-loop reads of the shard wait for it (flushCommitted). */
  noteFlushCommitting(shard: string, commit: Promise<unknown>): void {
    const settled = commit.then(
      () => {},
      () => {},
    );
    this.flushes.set(shard, settled);
    void settled.then(() => {
      if (this.flushes.get(shard) === settled) this.flushes.delete(shard);
    });
  }

  /** Resolves once no flush judged fresh is committing on the shard. */
  async flushCommitted(shard: string): Promise<void> {
    for (let pending = this.flushes.get(shard); pending !== undefined; pending = this.flushes.get(shard)) await pending;
  }

  /** Whether a flush cycle (no ack) would write from a stale read: a main-loop cycle is between its read and its commit, or committed after the flush read. */
  flushIsStale(shard: string): boolean {
    const order = this.shards.get(shard);
    // Only a flush that read ripe windows here is judged (a session window's flush reads every key, as the main loop).
    if (!order || order.flushRead === 0) return false;
    const mainInFlight = order.mainRead > order.mainCommit && this.clock() - order.mainReadAt < ABANDONED_MS;
    return mainInFlight || order.mainCommit > order.flushRead;
  }

  private order(shard: string): ShardOrder {
    const now = this.clock();
    if (now - this.lastSweep > IDLE_MS) {
      for (const [key, o] of this.shards) if (now - o.touchedAt > IDLE_MS) this.shards.delete(key);
      this.lastSweep = now;
    }
    let order = this.shards.get(shard);
    if (!order) {
      order = { mainRead: 0, mainReadAt: 0, mainCommit: 0, flushRead: 0, touchedAt: now };
      this.shards.set(shard, order);
    }
    order.touchedAt = now;
    return order;
  }
}
