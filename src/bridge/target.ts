/**
 * Where the bridge writes: the reading side (bridge.ts and source.ts: the
 * project's Kafka client on the source, partitions followed, batches
 * buffered, group offsets listed) is one
 * piece, and a target takes what it read. Two targets exist: the Queen core
 * (to-core.ts, offset-preserving appends) and an Apache Kafka cluster
 * (to-kafka.ts, transactions with a recorded offset mapping, for a rollback).
 *
 * Every target keeps its own ledger of what it holds, in source offsets: the
 * reader asks it where each partition stands when it starts following it, and
 * reads the source from there.
 */
import type { RawBatch } from '../kafka-client/fetch.js';

export interface PartitionWrite {
  topic: string;
  partition: number;
  /** The source offset below which everything is on the target already. */
  next: number;
  /** The source's batches read since, as the source stored them, ascending offsets (gaps between them are the source's). */
  batches: readonly RawBatch[];
  /** The source's end seen at end-of-partition when it is past `next` (a trailing gap: markers, aborted records), else null. */
  endOffset: number | null;
}

/** Per partition: where the target now stands (the source offset below which everything is on it); or why it was refused. */
export type PartitionWritten = { next: number } | { refused: string };

export interface SourceGroupOffset {
  topic: string;
  partition: number;
  offset: number;
}

/** What copying one group's offsets came to: commits made, or the group found to have moved (it is left alone from then on). */
export type GroupCopied = { commits: number } | { moved: string };

export interface BridgeTarget {
  /** For log lines: "the core", "Kafka at host:port". */
  readonly name: string;
  /**
   * Whether the target takes the source's batches as stored, aborted data and
   * transaction markers included (a core: appendAt rebuilds the transactions
   * from the markers), or only what a read_committed reader reads (Kafka: the
   * bridge writes its own transactions there, and a producer cannot send
   * markers).
   */
  readonly takesMarkers: boolean;
  /**
   * Makes sure `topic` exists on the target with `count` partitions (created
   * with the source's topic configs as far as the target takes them) and
   * answers, for partitions `known` to `count - 1`, the source offset to read
   * each from.
   */
  follow(topic: string, count: number, known: number, sourceConfigs: () => Promise<Record<string, string> | null>): Promise<number[]>;
  /** Writes the records of some partitions; answers per partition, in order. A throw leaves the records to be written again. */
  write(writes: PartitionWrite[]): Promise<PartitionWritten[]>;
  /** Whether a write that threw may simply be tried again later (the target unreachable), rather than ending the copy. */
  passing(e: unknown): boolean;
  /**
   * Commits a group's source offsets on the target (translated where the
   * target's offsets differ), those whose records are copied: `copiedTo`
   * answers the source offset a partition is copied up to, or undefined for a
   * partition not followed.
   */
  copyGroup(group: string, offsets: SourceGroupOffset[], copiedTo: (topic: string, partition: number) => number | undefined): Promise<GroupCopied>;
  close(): Promise<void>;
}

/** The metadata of every offset the bridge commits on a target: how it tells its own commits from a moved group's. */
export const COMMIT_METADATA = 'queen-bridge';
