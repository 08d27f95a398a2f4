/**
 * A transactional producer over the client, for record batches built
 * elsewhere (the reverse bridge hands it a gateway's stored batches): each
 * batch is sent with only its producer fields stamped (producer id, epoch,
 * sequence, the transactional flag, base offset 0, and so the CRC), its
 * records untouched. The transaction protocol is Kafka's version 1, as the
 * Java client speaks it to a broker without transaction version 2:
 * FindCoordinator and InitProducerId (which fences an earlier producer with
 * the same transactional id and aborts its open transaction),
 * AddPartitionsToTxn before a partition's first batch, Produce (acks=all, one
 * batch per partition per request, as Kafka takes them, requests pipelined
 * per leader), EndTxn. Retriable answers (the coordinator loading or moved,
 * CONCURRENT_TRANSACTIONS while earlier markers are written) are asked
 * again; a failed produce aborts the transaction and bumps the epoch (KIP-360:
 * InitProducerId with the current id and epoch), so sequences start again at
 * 0; being fenced (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH) is fatal.
 */
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { errorName } from '../../protocol/error-codes.js';
import { BatchAttr, BatchPos, CRC_START } from '../../protocol/records/batch-header.js';
import { crc32c } from '../../protocol/records/crc32c.js';
import type { KafkaClient } from './client.js';
import { KafkaError, LEADERSHIP_ERRORS } from './client.js';
import type { BrokerConnection } from './connection.js';
import { KafkaConnectionError } from './errors.js';

/** Answers after which the same request goes again (to the coordinator found anew). */
const COORDINATOR_ERRORS = new Set([14, 15, 16]); // COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
const CONCURRENT_TRANSACTIONS = 51;
/** Another producer took the transactional id: nothing this one sends counts any more. */
export const FENCED_ERRORS = new Set([47, 90, 53]); // INVALID_PRODUCER_EPOCH, PRODUCER_FENCED, TRANSACTIONAL_ID_AUTHORIZATION_FAILED
const RETRY_MS = 20;
const RETRY_FOR_MS = 60_000;

/** A failure of the producer; `fatal` when the producer was fenced (another one with its transactional id started). */
export class ProducerError extends KafkaError {
  constructor(
    code: number,
    message: string,
    readonly fatal: boolean,
  ) {
    super(code, message);
  }
}

/** One partition's batches for a produce: whole v2 batches, ascending, with contiguous offset deltas. */
export interface PartitionBatches {
  topic: string;
  partition: number;
  batches: readonly Buffer[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

export class TransactionalProducer {
  private producerId = -1n;
  private epoch = -1;
  private readonly sequences = new Map<string, number>();
  private readonly added = new Set<string>();

  private constructor(
    private readonly client: KafkaClient,
    readonly transactionalId: string,
    private readonly transactionTimeoutMs: number,
  ) {}

  /** Finds the coordinator and takes the transactional id (fencing an earlier holder, aborting what it left open). */
  static async start(client: KafkaClient, transactionalId: string, transactionTimeoutMs = 60_000): Promise<TransactionalProducer> {
    const producer = new TransactionalProducer(client, transactionalId, transactionTimeoutMs);
    await producer.initProducerId();
    return producer;
  }

  /** Begins a transaction (nothing goes to Kafka until a partition is written). */
  begin(): void {
    this.added.clear();
  }

  /**
   * Produces each partition's batches in the open transaction and answers,
   * per partition, the Kafka offset of each batch's first record.
   */
  async produce(parts: readonly PartitionBatches[]): Promise<number[][]> {
    await this.addPartitions(parts.filter((p) => p.batches.length > 0 && !this.added.has(key(p.topic, p.partition))));
    const rounds = Math.max(0, ...parts.map((p) => p.batches.length));
    // The leaders' connections first, so each round's requests are written in order, without an await between them.
    const connections = new Map<number, BrokerConnection>();
    for (const p of parts.filter((x) => x.batches.length > 0)) {
      const leader = this.client.leaderOf(p.topic, p.partition)?.leader ?? -1;
      if (leader < 0) throw new ProducerError(5, `${p.topic}/${p.partition} has no leader on Kafka`, false);
      if (!connections.has(leader)) connections.set(leader, await this.client.connection(leader));
    }
    const asked: Promise<void>[] = [];
    const offsets = parts.map(() => [] as number[]);
    for (let round = 0; round < rounds; round++) {
      const byLeader = new Map<number, { at: number; bytes: Buffer }[]>();
      parts.forEach((p, at) => {
        const batch = p.batches[round];
        if (!batch) return;
        const leader = this.client.leaderOf(p.topic, p.partition)!.leader;
        byLeader.set(leader, [...(byLeader.get(leader) ?? []), { at, bytes: this.stamp(p.topic, p.partition, batch) }]);
      });
      for (const [leader, batches] of byLeader) asked.push(this.produceTo(connections.get(leader)!, parts, batches, round, offsets));
    }
    // Requests on one connection are answered in order; all of them must land.
    const settled = await Promise.allSettled(asked);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return offsets;
  }

  /** Commits the open transaction; asked again while the answer is retriable (a repeated commit of a committed transaction is answered as done). */
  commit(): Promise<void> {
    return this.endTxn(true);
  }

  /** Aborts the open transaction and bumps the epoch, so the next transaction's sequences start at 0. */
  async abort(): Promise<void> {
    if (this.added.size > 0) await this.endTxn(false);
    this.added.clear();
    await this.initProducerId();
  }

  /** Long because each batch's place in the answer is found by topic and partition. */
  private async produceTo(connection: BrokerConnection, parts: readonly PartitionBatches[], batches: { at: number; bytes: Buffer }[], round: number, offsets: number[][]): Promise<void> {
    const topics = [...new Set(batches.map((b) => parts[b.at]!.topic))].map((name) => ({
      name,
      partitionData: batches.filter((b) => parts[b.at]!.topic === name).map((b) => ({ index: parts[b.at]!.partition, records: b.bytes })),
    }));
    const answer = await connection.request(ApiKey.Produce, { transactionalId: this.transactionalId, acks: -1, timeoutMs: 30_000, topicData: topics });
    for (const t of answer['responses'] as Message[]) {
      for (const p of t['partitionResponses'] as Message[]) {
        const b = batches.find((x) => parts[x.at]!.topic === t['name'] && parts[x.at]!.partition === p['index']);
        if (!b) continue;
        const code = p['errorCode'] as number;
        const where = `${t['name'] as string}/${p['index'] as number}`;
        if (code !== 0) {
          if (LEADERSHIP_ERRORS.has(code)) await this.client.refreshMetadata([t['name'] as string]).catch(() => {});
          throw new ProducerError(code, `Kafka answered ${errorName(code)} (${code}) producing to ${where}${p['errorMessage'] ? ` (${p['errorMessage'] as string})` : ''}`, FENCED_ERRORS.has(code));
        }
        offsets[b.at]![round] = Number(p['baseOffset']);
      }
    }
  }

  /** The batch with this producer's fields: producer id, epoch, next sequence, transactional; base offset 0 and no leader epoch, as a producer sends it. */
  private stamp(topic: string, partition: number, batch: Buffer): Buffer {
    const out = Buffer.from(batch);
    const k = key(topic, partition);
    const sequence = this.sequences.get(k) ?? 0;
    const count = out.readInt32BE(BatchPos.RecordCount);
    out.writeBigInt64BE(0n, BatchPos.BaseOffset);
    out.writeInt32BE(-1, BatchPos.PartitionLeaderEpoch);
    out.writeInt16BE(out.readInt16BE(BatchPos.Attributes) | BatchAttr.Transactional, BatchPos.Attributes);
    out.writeBigInt64BE(this.producerId, BatchPos.ProducerId);
    out.writeInt16BE(this.epoch, BatchPos.ProducerEpoch);
    out.writeInt32BE(sequence, BatchPos.BaseSequence);
    out.writeUInt32BE(crc32c(out.subarray(CRC_START)), BatchPos.Crc);
    this.sequences.set(k, (sequence + count) % 2 ** 31);
    return out;
  }

  private async addPartitions(parts: readonly { topic: string; partition: number }[]): Promise<void> {
    if (parts.length === 0) return;
    const topics = [...new Set(parts.map((p) => p.topic))].map((name) => ({ name, partitions: parts.filter((p) => p.topic === name).map((p) => p.partition) }));
    await this.toCoordinator('AddPartitionsToTxn', async (c) => {
      const answer = await c.request(ApiKey.AddPartitionsToTxn, { v3AndBelowTransactionalId: this.transactionalId, v3AndBelowProducerId: this.producerId, v3AndBelowProducerEpoch: this.epoch, v3AndBelowTopics: topics });
      const codes = (answer['resultsByTopicV3AndBelow'] as Message[]).flatMap((t) => (t['resultsByPartition'] as Message[]).map((p) => p['partitionErrorCode'] as number));
      return codes.find((code) => code !== 0) ?? 0;
    });
    for (const p of parts) this.added.add(key(p.topic, p.partition));
  }

  private async endTxn(committed: boolean): Promise<void> {
    await this.toCoordinator(committed ? 'EndTxn (commit)' : 'EndTxn (abort)', async (c) => {
      const answer = await c.request(ApiKey.EndTxn, { transactionalId: this.transactionalId, producerId: this.producerId, producerEpoch: this.epoch, committed });
      return answer['errorCode'] as number;
    });
    this.added.clear();
  }

  /** InitProducerId: a new id or epoch; with the current ones once the producer has them (the epoch bump of KIP-360, which fails if another producer took the id). */
  private async initProducerId(): Promise<void> {
    await this.toCoordinator('InitProducerId', async (c) => {
      const answer = await c.request(ApiKey.InitProducerId, { transactionalId: this.transactionalId, transactionTimeoutMs: this.transactionTimeoutMs, producerId: this.producerId, producerEpoch: this.epoch });
      if (answer['errorCode'] === 0) {
        this.producerId = answer['producerId'] as bigint;
        this.epoch = answer['producerEpoch'] as number;
      }
      return answer['errorCode'] as number;
    });
    this.sequences.clear();
  }

  /**
   * Asks the transaction coordinator, found anew after a coordinator error
   * or a failed connection, again after CONCURRENT_TRANSACTIONS, for up to a
   * minute; any other error throws.
   */
  private async toCoordinator(what: string, ask: (c: BrokerConnection) => Promise<number>): Promise<void> {
    const deadline = Date.now() + RETRY_FOR_MS;
    let last = '';
    while (Date.now() < deadline) {
      let code: number;
      try {
        code = await ask(await this.client.coordinator(1, this.transactionalId));
      } catch (e) {
        const retriable = e instanceof KafkaConnectionError || (e instanceof KafkaError && COORDINATOR_ERRORS.has(e.code));
        if (!retriable) throw e;
        last = (e as Error).message;
        await sleep(RETRY_MS * 5);
        continue;
      }
      if (code === 0) return;
      if (!COORDINATOR_ERRORS.has(code) && code !== CONCURRENT_TRANSACTIONS) throw new ProducerError(code, `${what} for transactional id ${this.transactionalId} answered ${errorName(code)} (${code})`, FENCED_ERRORS.has(code));
      last = errorName(code);
      await sleep(RETRY_MS);
    }
    throw new ProducerError(-1, `${what} for transactional id ${this.transactionalId} did not succeed within ${RETRY_FOR_MS / 1000} s (last: ${last})`, false);
  }
}
