/**
 * Queen's maintenance modes, for the HTTP API.
 *
 * Push maintenance: a push is accepted and answered `buffered`, but its
 * messages are not delivered until the mode is switched off. Queen writes
 * them to a file beside each server; here they go to one queue of the core,
 * `__queen_maintenance_buffer`, so they are as durable as any message and any
 * gateway can deliver them. When the mode is off, every gateway's drainer
 * takes buffered messages under a lease and moves each to the queue it was
 * pushed to in one core transaction (push there, ack here): a message is
 * delivered once, in the order it was buffered.
 *
 * Pop maintenance: every pop answers no messages (a long-poll waits, up to
 * its timeout, for the mode to end).
 *
 * Both modes live in the core's KV store, so every gateway on one store
 * follows a switch within CACHE_MS. Kafka clients are not affected: Queen's
 * modes concern its own API.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Core, PushItem, TransactionOperation } from '../core/core.js';
import { withQueuesCreated } from './pushes.js';

export const MAINTENANCE_BUFFER_QUEUE = '__queen_maintenance_buffer';
const DRAIN_GROUP = '__queen_maintenance_drain';
const NS = 'queen.system';
const KEY = 'maintenance';
/** How stale one gateway's view of a switch made on another may be. */
const CACHE_MS = 1_000;
const DRAIN_BATCH = 100;
const DRAIN_IDLE_MS = 500;

export interface MaintenanceModes {
  push: boolean;
  pop: boolean;
}

/** What a buffered message carries: the item as it was pushed, with the transaction id it will be stored under. */
type BufferedItem = Required<Pick<PushItem, 'queue' | 'partition' | 'transactionId'>> & Pick<PushItem, 'payload' | 'traceId'>;

export class Maintenance {
  private cached: MaintenanceModes = { push: false, pop: false };
  private readAt = -Infinity;
  private draining: Promise<void> | null = null;

  constructor(
    private readonly core: Core,
    private readonly stopping: AbortSignal,
    private readonly log?: Logger,
  ) {}

  async modes(): Promise<MaintenanceModes> {
    if (Date.now() - this.readAt < CACHE_MS) return this.cached;
    const entry = await this.core.kvGet({ ns: NS, key: KEY });
    this.remember((entry?.value as Partial<MaintenanceModes> | undefined) ?? {});
    return this.cached;
  }

  /** Switches one mode, for every gateway on this store; switching push off starts the delivery of what was buffered. */
  async set(mode: keyof MaintenanceModes, enabled: boolean): Promise<MaintenanceModes> {
    for (;;) {
      const entry = await this.core.kvGet({ ns: NS, key: KEY });
      const value = { push: false, pop: false, ...((entry?.value as Partial<MaintenanceModes> | undefined) ?? {}), [mode]: enabled };
      const { applied } = await this.core.kvPut({ ns: NS, key: KEY, value, expectedVersion: entry?.version ?? 0 });
      if (!applied) continue; // another gateway switched the other mode meanwhile: read again
      this.remember(value);
      if (mode === 'push' && !enabled) this.startDraining();
      return this.cached;
    }
  }

  /** Keeps the items for later; each is answered as Queen answers a buffered push. */
  async buffer(items: PushItem[]): Promise<{ status: 'buffered'; queue: string; partition: string; transactionId: string }[]> {
    const buffered: BufferedItem[] = items.map((item) => ({
      queue: item.queue,
      partition: item.partition ?? 'Default',
      transactionId: item.transactionId ?? randomUUID(),
      payload: item.payload,
      ...(item.traceId === undefined ? {} : { traceId: item.traceId }),
    }));
    const target = [{ queue: MAINTENANCE_BUFFER_QUEUE, partition: 'Default' }];
    await withQueuesCreated(this.core, target, () => this.core.push({ items: buffered.map((b) => ({ ...target[0]!, payload: b })) }));
    this.startDraining();
    return buffered.map((b) => ({ status: 'buffered', queue: b.queue, partition: b.partition, transactionId: b.transactionId }));
  }

  /** Messages buffered and not yet delivered. */
  async bufferedCount(): Promise<number> {
    const [{ partitions: [end] }, { offsets }] = await Promise.all([
      this.core.offsets({ partitions: [{ queue: MAINTENANCE_BUFFER_QUEUE, partition: 0 }] }),
      this.core.fetchOffsets({ group: DRAIN_GROUP, partitions: [{ queue: MAINTENANCE_BUFFER_QUEUE, partition: 0 }] }),
    ]);
    if (!end || end.error) return 0;
    const position = Math.max(offsets[0]?.offset ?? 0, end.logStartOffset);
    return Math.max(0, end.highWatermark - position);
  }

  /** At start: delivers what a gateway that stopped left buffered. */
  async resume(): Promise<void> {
    if ((await this.core.describeQueue({ name: MAINTENANCE_BUFFER_QUEUE })) && (await this.bufferedCount()) > 0) this.startDraining();
  }

  /** Delivers what is buffered once push maintenance is off; ends when the buffer is empty or the server stops. */
  startDraining(): void {
    this.draining ??= this.drainLoop().finally(() => {
      this.draining = null;
    });
  }

  async stopped(): Promise<void> {
    await this.draining;
  }

  private remember(value: Partial<MaintenanceModes>): void {
    this.cached = { push: value.push === true, pop: value.pop === true };
    this.readAt = Date.now();
  }

  /** Waits while push maintenance is on, then delivers until the buffer is empty. */
  private async drainLoop(): Promise<void> {
    while (!this.stopping.aborted) {
      try {
        if (!(await this.modes()).push) {
          if ((await this.drainOnce()) > 0) continue;
          return;
        }
      } catch (e) {
        this.log?.warn({ err: e }, 'moving messages buffered during push maintenance failed; trying again');
      }
      await sleep(DRAIN_IDLE_MS, undefined, { signal: this.stopping }).catch(() => {});
    }
  }

  /** One batch: pushed to their queues and acked here in one transaction. */
  private async drainOnce(): Promise<number> {
    const popped = await this.core
      .pop({ queue: MAINTENANCE_BUFFER_QUEUE, consumerGroup: DRAIN_GROUP, owner: `drain-${randomUUID()}`, batch: DRAIN_BATCH, waitMs: 0 })
      .catch((e: unknown) => {
        if ((e as { code?: string }).code === 'unknown_queue') return { messages: [], lease: null };
        throw e;
      });
    if (popped.messages.length === 0 || !popped.lease) return 0;
    const items = popped.messages.map((m) => m.payload as BufferedItem);
    const operations: TransactionOperation[] = [
      ...items.map((item) => ({ op: 'push' as const, ifStored: 'answer' as const, ...item })),
      ...popped.messages.map((m) => ({ op: 'ack' as const, required: true, queue: m.queue, partition: m.partition, consumerGroup: DRAIN_GROUP, offset: m.offset, status: 'completed' as const, leaseId: popped.lease!.id })),
    ];
    const outcome = await withQueuesCreated(this.core, items, () => this.core.transaction({ operations }));
    if (!outcome.success) throw new Error(`moving ${items.length} buffered messages rolled back (${outcome.reason}): ${outcome.message}`);
    return items.length;
  }
}
