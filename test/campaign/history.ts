/**
 * What a fault campaign saw, as the checker (./checker.ts) reads it: every
 * write a client attempted with what the client was told, the topics as read
 * back at the end, what each consumer group read and committed, and every
 * Queen `once` attempt. The workloads (./workloads.ts) fill it while the
 * faults run; the checker judges it afterwards, so a history can also be
 * built by hand (./checker.test.ts plants anomalies in one).
 *
 * Every value a campaign writes is `stream|key|seq`: the stream names the
 * producer (one librdkafka idempotent producer, the Java one, a transactional
 * producer, the HTTP pushes), the key is the record's key and the sequence
 * number counts that stream's writes to that key, so order per key is read
 * off the values.
 */

export type Outcome =
  /** The client was told the write is stored (a delivery report without error, a commit that returned, a 201). */
  | 'acknowledged'
  /** The client was told nothing certain (an error, a timeout): it may be stored, at most once. */
  | 'uncertain';

export interface Write {
  topic: string;
  value: string;
  outcome: Outcome;
}

export interface Transaction {
  /** "txn-rd:17": the producer's stream and the transaction's number. */
  id: string;
  topic: string;
  values: string[];
  /** committed: commitTransaction returned; aborted: abortTransaction returned; uncertain: neither is known. */
  outcome: 'committed' | 'aborted' | 'uncertain';
}

export interface StoredRecord {
  partition: number;
  offset: number;
  value: string;
}

export interface TopicLog {
  topic: string;
  /** What a read_committed consumer read from the start to the end of every partition. */
  records: StoredRecord[];
}

export interface GroupRead {
  member: string;
  partition: number;
  offset: number;
  value: string;
}

export interface GroupCommit {
  member: string;
  partition: number;
  /** The next offset to read, as the coordinator acknowledged it. */
  offset: number;
  /** When the acknowledgement arrived (Date.now()), which orders the commits of all members. */
  at: number;
}

export interface GroupHistory {
  group: string;
  topic: string;
  protocol: 'classic' | 'consumer';
  reads: GroupRead[];
  commits: GroupCommit[];
  /** The committed offset of each partition as the group reads it back at the end (OffsetFetch), once its members closed. */
  final?: Map<number, number>;
}

/** One record handed to a share group member's application (a delivery; Kafka counts them per record). */
export interface ShareDelivery {
  member: string;
  partition: number;
  offset: number;
  value: string;
  deliveryCount: number;
}

/** A member's ACCEPT of one delivery: accepted when its commitSync answered the partition without error. */
export interface ShareAck {
  member: string;
  partition: number;
  offset: number;
  /** The delivery count of the delivery it acknowledges. */
  deliveryCount: number;
  accepted: boolean;
}

export interface ShareGroupHistory {
  group: string;
  topic: string;
  deliveries: ShareDelivery[];
  acks: ShareAck[];
}

export interface TransformHistory {
  input: string;
  output: string;
  /** The output value each input value must turn into. */
  transform(value: string): string;
}

export interface OnceAttempt {
  caller: string;
  /** won/lost: the last answer that caller got; unknown: no answer reached it. */
  outcome: 'won' | 'lost' | 'unknown';
}

export interface OnceHistory {
  key: string;
  attempts: OnceAttempt[];
}

export interface CampaignHistory {
  writes: Write[];
  transactions: Transaction[];
  /** Streams whose order per key the clients promise (Kafka's idempotent and transactional producers). */
  orderedStreams: string[];
  logs: TopicLog[];
  groups: GroupHistory[];
  shareGroups: ShareGroupHistory[];
  transforms: TransformHistory[];
  once: OnceHistory[];
}

export function emptyHistory(): CampaignHistory {
  return { writes: [], transactions: [], orderedStreams: [], logs: [], groups: [], shareGroups: [], transforms: [], once: [] };
}

/** `stream|key|seq`, the one form every campaign value has. */
export function campaignValue(stream: string, key: string, seq: number): string {
  return `${stream}|${key}|${seq}`;
}

export interface ParsedValue {
  stream: string;
  key: string;
  seq: number;
}

export function parseCampaignValue(value: string): ParsedValue | null {
  const parts = value.split('|');
  if (parts.length !== 3) return null;
  const seq = Number(parts[2]);
  return Number.isInteger(seq) ? { stream: parts[0]!, key: parts[1]!, seq } : null;
}
