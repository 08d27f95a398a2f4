import { mintUuidV7 } from '../ids/uuidv7.js';
import { consumerGroupOf } from './groups.js';
import { HttpTransport, segment } from './http.js';
import { TransactionBuilder } from './transaction.js';
import type { AckOptions, KvEntry, Lease, LifetimeOptions, Message, PopOptions, PushInput, PushOutcome, QueueOptions } from './types.js';
import { fromKvEntry, fromLease, fromMessage, fromPushItem, type KvEntryJson, type LeaseJson, type MessageJson, type PushItemJson } from './wire.js';

/**
 * A typed client for Queen's native HTTP API (src/http/README.md):
 *
 * ```ts
 * const client = new QueenClient('http://127.0.0.1:6632');
 * const [first] = await client.queue('payments').partition('customer-42').push([{ transactionId: 'order-9137-paid', data }]);
 * const messages = await client.queue('payments').pop({ consumerGroup: 'billing', wait: true });
 * await client.ack(messages[0], 'completed');
 * const res = await client.transaction().ack(m, 'completed', { consumerGroup: 'mailer' })
 *   .queue('emails').push([{ data: mail }]).once('welcome', userId, { ttl: '7d' }).commit();
 * const { won } = await client.kv.once('welcome', userId, { ttl: '7d' });
 * ```
 *
 * A push without a transactionId gets a fresh UUIDv7, so it is never taken
 * for a duplicate. Acks carry no lease id: a message can be acked whenever
 * its group holds a live lease over it, which is what lets a worker ack after
 * its once gate was lost.
 */
export interface QueenClientOptions {
  url: string;
  /** Default the global fetch. */
  fetch?: typeof fetch;
}

export class QueenClient {
  private readonly http: HttpTransport;
  readonly kv: KvClient;

  constructor(options: QueenClientOptions | string) {
    const { url, fetch: fetchImpl } = typeof options === 'string' ? { url: options, fetch: undefined } : options;
    this.http = new HttpTransport(url, fetchImpl);
    this.kv = new KvClient(this.http);
  }

  queue(name: string): QueueHandle {
    return new QueueHandle(this.http, name, undefined);
  }

  transaction(): TransactionBuilder {
    return new TransactionBuilder(this.http);
  }

  async ack(message: Pick<Message, 'queue' | 'partition' | 'offset' | 'consumerGroup'>, status: 'completed' | 'failed', options: AckOptions = {}): Promise<{ acked: boolean }> {
    const { body } = await this.http.request<{ success: boolean }[]>('POST', '/api/v1/ack', {
      queue: message.queue,
      partition: message.partition,
      offset: message.offset,
      status,
      consumerGroup: consumerGroupOf(message, options),
    });
    return { acked: body[0]?.success === true };
  }

  async renewLease(lease: string | Pick<Message, 'leaseId'>, extendMs: number): Promise<Lease> {
    const id = typeof lease === 'string' ? lease : lease.leaseId;
    if (!id) throw new TypeError('renewLease needs a lease id, or a message that came from pop.');
    const { body } = await this.http.request<{ lease: LeaseJson }[]>('POST', `/api/v1/lease/${segment(id)}/extend`, { extendMs });
    return fromLease(body[0]!.lease);
  }

  async health(): Promise<{ status: string }> {
    return (await this.http.request<{ status: string }>('GET', '/health')).body;
  }
}

export class QueueHandle {
  constructor(
    private readonly http: HttpTransport,
    readonly name: string,
    readonly partitionName: string | undefined,
  ) {}

  partition(name: string): QueueHandle {
    return new QueueHandle(this.http, this.name, name);
  }

  /** Creates the queue, or changes its options when it exists. */
  async configure(options: QueueOptions = {}, partitions?: number): Promise<{ created: boolean }> {
    const { body } = await this.http.request<{ created: boolean }>('POST', '/api/v1/configure', {
      queue: this.name,
      ...(partitions === undefined ? {} : { partitions }),
      options,
    });
    return { created: body.created };
  }

  /** One outcome per item, in order: queued, or duplicate with the original message's id and offset. */
  async push(items: readonly PushInput[]): Promise<PushOutcome[]> {
    const { body } = await this.http.request<PushItemJson[]>('POST', '/api/v1/push', {
      items: items.map((item) => ({
        queue: this.name,
        ...(this.partitionName === undefined ? {} : { partition: this.partitionName }),
        transactionId: item.transactionId ?? mintUuidV7(),
        payload: item.data,
      })),
    });
    return body.map(fromPushItem);
  }

  /** Pops for a consumer group; the messages come with the lease they are held under. */
  async pop(options: PopOptions = {}): Promise<Message[]> {
    const query = new URLSearchParams(options.consumerGroup === undefined ? {} : { consumerGroup: options.consumerGroup });
    if (options.batch !== undefined) query.set('batch', String(options.batch));
    if (options.wait) query.set('wait', 'true');
    if (options.timeoutMs !== undefined) query.set('timeout', String(options.timeoutMs));
    if (options.owner !== undefined) query.set('owner', options.owner);
    if (options.leaseMs !== undefined) query.set('leaseMs', String(options.leaseMs));
    const path = `/api/v1/pop/queue/${segment(this.name)}${this.partitionName === undefined ? '' : `/partition/${segment(this.partitionName)}`}?${query}`;
    const { body } = await this.http.request<{ messages: MessageJson[] }>('GET', path, undefined, options.signal);
    return body.messages.map(fromMessage);
  }
}

export class KvClient {
  constructor(private readonly http: HttpTransport) {}

  private path(ns: string, key: string, action = ''): string {
    return `/api/v1/kv/${segment(ns)}/${segment(key)}${action}`;
  }

  /** The live entry, or null when absent or expired. */
  async get(ns: string, key: string): Promise<KvEntry | null> {
    try {
      return fromKvEntry((await this.http.request<KvEntryJson>('GET', this.path(ns, key))).body);
    } catch (e) {
      if ((e as { status?: number; code?: string }).status === 404 && (e as { code?: string }).code === 'not_found') return null;
      throw e;
    }
  }

  async list(ns: string, prefix = '', limit?: number): Promise<KvEntry[]> {
    const query = new URLSearchParams({ prefix, ...(limit === undefined ? {} : { limit: String(limit) }) });
    const { body } = await this.http.request<{ entries: KvEntryJson[] }>('GET', `/api/v1/kv/${segment(ns)}?${query}`);
    return body.entries.map(fromKvEntry);
  }

  async put(ns: string, key: string, value: unknown, options: Partial<LifetimeOptions> & { expectedVersion?: number } = {}): Promise<{ applied: boolean; entry: KvEntry | null }> {
    return this.write('PUT', this.path(ns, key), { value, ...options });
  }

  async putIfAbsent(ns: string, key: string, value: unknown, lifetime: Partial<LifetimeOptions> = {}): Promise<{ applied: boolean; entry: KvEntry | null }> {
    return this.write('POST', this.path(ns, key, '/put-if-absent'), { value, ...lifetime });
  }

  async delete(ns: string, key: string): Promise<{ deleted: boolean }> {
    return (await this.http.request<{ deleted: boolean }>('DELETE', this.path(ns, key))).body;
  }

  async incr(ns: string, key: string, by = 1, lifetime: Partial<LifetimeOptions> = {}): Promise<KvEntry> {
    const { body } = await this.http.request<{ entry: KvEntryJson }>('POST', this.path(ns, key, '/incr'), { by, ...lifetime });
    return fromKvEntry(body.entry);
  }

  /** Marks a step done; `won` is false when it already was (and the marker has not expired). */
  async once(ns: string, key: string, lifetime: LifetimeOptions): Promise<{ won: boolean }> {
    return (await this.http.request<{ won: boolean }>('POST', this.path(ns, key, '/once'), lifetime)).body;
  }

  private async write(method: string, path: string, body: unknown): Promise<{ applied: boolean; entry: KvEntry | null }> {
    const { body: answer } = await this.http.request<{ applied: boolean; entry: KvEntryJson | null }>(method, path, body);
    return { applied: answer.applied, entry: answer.entry ? fromKvEntry(answer.entry) : null };
  }
}
