import { mintUuidV7 } from '../ids/uuidv7.js';
import { QueenDuplicateError } from './errors.js';
import type { HttpTransport } from './http.js';
import type { AckOptions, LifetimeOptions, Message, PushInput, TransactionOutcome } from './types.js';
import { consumerGroupOf } from './groups.js';

/**
 * A transaction, built call by call and sent whole by commit(): pushes, acks
 * and KV operations (once included), all or nothing.
 *
 * commit() resolves `{ success: true, results }` (one result per call, in
 * order) or, when a once gate was lost or a required KV precondition did not
 * hold, `{ success: false, reason: 'kv_precondition', ... }` without
 * throwing. It throws QueenDuplicateError when a push carries an id its
 * partition already stores (a retry of a transaction that committed), and
 * QueenHttpError when the server refuses the request.
 */
export class TransactionBuilder {
  private readonly operations: Record<string, unknown>[] = [];

  constructor(private readonly http: HttpTransport) {}

  ack(message: Pick<Message, 'queue' | 'partition' | 'offset' | 'consumerGroup'>, status: 'completed' | 'failed', options: AckOptions = {}): this {
    this.operations.push({ type: 'ack', queue: message.queue, partition: message.partition, offset: message.offset, status, consumerGroup: consumerGroupOf(message, options) });
    return this;
  }

  /** Pushes inside the transaction: `.queue('emails').push([...])`, or `.queue('emails').partition('p').push([...])`. */
  queue(name: string): TransactionQueue {
    return new TransactionQueue(this, name, undefined);
  }

  /** @internal used by TransactionQueue. */
  addPush(queue: string, partition: string | undefined, items: readonly PushInput[]): this {
    this.operations.push({
      type: 'push',
      items: items.map((item) => ({
        queue,
        ...(partition === undefined ? {} : { partition }),
        transactionId: item.transactionId ?? mintUuidV7(),
        payload: item.data,
      })),
    });
    return this;
  }

  /** A gate: refuses the whole transaction (kv_precondition) when this step already ran. */
  once(ns: string, key: string, lifetime: LifetimeOptions): this {
    this.operations.push({ type: 'once', ns, key, ...lifetime });
    return this;
  }

  put(ns: string, key: string, value: unknown, options: Partial<LifetimeOptions> & { expectedVersion?: number; required?: boolean } = {}): this {
    this.operations.push({ type: 'kv.put', ns, key, value, ...options });
    return this;
  }

  putIfAbsent(ns: string, key: string, value: unknown, options: Partial<LifetimeOptions> & { required?: boolean } = {}): this {
    this.operations.push({ type: 'kv.putIfAbsent', ns, key, value, ...options });
    return this;
  }

  delete(ns: string, key: string): this {
    this.operations.push({ type: 'kv.delete', ns, key });
    return this;
  }

  incr(ns: string, key: string, by = 1, lifetime: Partial<LifetimeOptions> = {}): this {
    this.operations.push({ type: 'kv.incr', ns, key, by, ...lifetime });
    return this;
  }

  async commit(): Promise<TransactionOutcome> {
    const { body } = await this.http.request<
      | { success: true; results: unknown[] }
      | { success: false; reason: 'duplicate' | 'kv_precondition' | 'not_acked'; failed_index: number; failed_item?: number; message: string }
    >('POST', '/api/v1/transaction', { operations: this.operations });
    if (body.success) return { success: true, results: body.results };
    const failedItem = body.failed_item ?? null;
    if (body.reason === 'duplicate') throw new QueenDuplicateError(body.message, body.failed_index, failedItem);
    return { success: false, reason: body.reason, failedIndex: body.failed_index, failedItem, message: body.message };
  }
}

export class TransactionQueue {
  constructor(
    private readonly transaction: TransactionBuilder,
    private readonly name: string,
    private readonly partitionName: string | undefined,
  ) {}

  partition(name: string): TransactionQueue {
    return new TransactionQueue(this.transaction, this.name, name);
  }

  push(items: readonly PushInput[]): TransactionBuilder {
    return this.transaction.addPush(this.name, this.partitionName, items);
  }
}
