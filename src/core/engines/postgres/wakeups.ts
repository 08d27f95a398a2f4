import type { Client } from 'pg';

/**
 * Long-poll wake-ups. Inside the process an append wakes the readers and
 * poppers waiting on its partitions directly. Across processes on the same
 * database, each append transaction sends one NOTIFY (delivered at commit)
 * naming the partitions it touched; every core LISTENs on its schema's
 * channel and wakes its own waiters. DRIVER.md has the measurements.
 *
 * A wake-up only means "look again": waiters re-read the database, so a
 * spurious or repeated one costs a query, and a lost one costs at most the
 * waiter's deadline. When the LISTEN connection drops, everyone is woken
 * and the connection is made again.
 *
 * With a relay (redis-wakeups.ts: Redis pub/sub, chosen with a Redis URL),
 * the payload is published after commit instead, and the append
 * transaction sends no NOTIFY, except while the relay cannot publish: then
 * appends NOTIFY again, and every core still LISTENs, so losing Redis costs
 * no wake-up. A core whose subscription is down polls instead (wakes all of
 * its waiters every POLL_WHILE_UNSUBSCRIBED_MS) until it is back.
 */

export function partitionKey(queue: string, index: number): string {
  return `p\u0000${queue}\u0000${index}`;
}

export function queueKey(queue: string): string {
  return `q\u0000${queue}`;
}

/** NOTIFY payloads are limited to 8000 bytes; past that the message wakes everyone. */
const MAX_PAYLOAD = 7900;
const WAKE_ALL = '*';
/** How often waiters look again while the relay's subscription is down. */
export const POLL_WHILE_UNSUBSCRIBED_MS = 200;

/** Carries payloads to the other cores by some other means than NOTIFY (redis-wakeups.ts). */
export interface WakeupRelay {
  /** False while it cannot publish; appends then NOTIFY instead. */
  readonly canPublish: boolean;
  /** Sends after commit; a publish that fails costs a waiter at most its deadline. */
  publish(payload: string): void;
  close(): Promise<void>;
}

export class Wakeups {
  private readonly waiters = new Map<string, Set<() => void>>();
  private listener: Client | null = null;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private relay: WakeupRelay | null = null;
  private pollTimer: NodeJS.Timeout | null = null;

  constructor(
    /** Identifies this core in payloads, so it ignores its own notifications. */
    private readonly instanceId: string,
    readonly channel: string,
  ) {}

  register(keys: string[], wake: () => void): () => void {
    for (const key of keys) {
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      set.add(wake);
    }
    return () => {
      for (const key of keys) {
        const set = this.waiters.get(key);
        set?.delete(wake);
        if (set?.size === 0) this.waiters.delete(key);
      }
    };
  }

  wake(keys: Iterable<string>): void {
    const woken = new Set<() => void>();
    for (const key of keys) for (const wake of this.waiters.get(key) ?? []) woken.add(wake);
    for (const wake of woken) wake();
  }

  wakeAll(): void {
    const woken = new Set<() => void>();
    for (const set of this.waiters.values()) for (const wake of set) woken.add(wake);
    for (const wake of woken) wake();
  }

  /** Sends this core's wake-ups through `relay` rather than NOTIFY. */
  useRelay(relay: WakeupRelay): void {
    this.relay = relay;
  }

  /** Whether an append transaction should NOTIFY: always without a relay, and while the relay cannot publish. */
  get notifyInTransaction(): boolean {
    return this.relay === null || !this.relay.canPublish;
  }

  /**
   * After an append committed: publishes the partitions it touched through
   * the relay, unless the transaction has already NOTIFIED them.
   */
  announce(partitions: { queue: string; index: number }[], notified: boolean): void {
    if (this.relay === null || notified || partitions.length === 0) return;
    this.relay.publish(this.payloadFor(partitions));
  }

  /** The relay's subscription is down (poll until it is back) or back (stop, and look once). */
  subscriptionLost(): void {
    if (this.pollTimer || this.closed) return;
    this.pollTimer = setInterval(() => this.wakeAll(), POLL_WHILE_UNSUBSCRIBED_MS);
    this.pollTimer.unref();
  }

  subscriptionBack(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = null;
    // Appends may have been published while nobody here was subscribed.
    this.wakeAll();
  }

  /** The NOTIFY payload for an append to these partitions of these queues. */
  payloadFor(partitions: { queue: string; index: number }[]): string {
    const body = JSON.stringify(partitions.map((p) => [p.queue, p.index]));
    return `${this.instanceId} ${body.length > MAX_PAYLOAD ? WAKE_ALL : body}`;
  }

  /** A payload from another core (NOTIFY or the relay); its own are ignored. */
  deliver(payload: string | undefined): void {
    if (!payload) return;
    const space = payload.indexOf(' ');
    if (payload.slice(0, space) === this.instanceId) return;
    const body = payload.slice(space + 1);
    if (body === WAKE_ALL) return this.wakeAll();
    try {
      const keys: string[] = [];
      for (const [queue, index] of JSON.parse(body) as [string, number][]) keys.push(partitionKey(queue, index), queueKey(queue));
      this.wake(keys);
    } catch {
      this.wakeAll();
    }
  }

  async listen(connect: () => Client): Promise<void> {
    const client = connect();
    this.listener = client;
    client.on('notification', (message) => this.deliver(message.payload));
    const lost = (): void => {
      if (this.listener !== client) return;
      this.listener = null;
      client.end().catch(() => {});
      // Appends may have happened while nobody listened.
      this.wakeAll();
      this.scheduleReconnect(connect);
    };
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (e) {
      lost();
      throw e;
    }
  }

  private scheduleReconnect(connect: () => Client): void {
    if (this.closed) return;
    this.reconnectTimer = setTimeout(() => void this.listen(connect).catch(() => {}), 1000);
    this.reconnectTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    await this.relay?.close();
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => {});
    this.wakeAll();
  }
}
