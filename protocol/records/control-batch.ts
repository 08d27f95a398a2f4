/** Control batches: the transaction markers (Abort, Commit) written into a partition's log. */
import { DecodeError } from '../primitives/decode-error.js';
import { NO_SEQUENCE } from './batch-attributes.js';
import { buildBatch } from './batch-building.js';
import type { BatchRecord } from './record-walk.js';

/** Control record types (the key's second int16). */
export const ControlRecordType = {
  Abort: 0,
  Commit: 1,
} as const;
export type ControlRecordType = (typeof ControlRecordType)[keyof typeof ControlRecordType];

export interface ControlBatchOptions {
  type: ControlRecordType;
  producerId: bigint | number;
  producerEpoch: number;
  coordinatorEpoch: number;
  timestamp?: bigint | number;
  baseOffset?: bigint | number;
  partitionLeaderEpoch?: number;
}

/**
 * A transaction marker: a transactional control batch with one record whose
 * key is (version 0, type) and whose value is (version 0, coordinatorEpoch).
 */
export function buildControlBatch(options: ControlBatchOptions): Buffer {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(options.type, 2);
  const value = Buffer.alloc(6);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(options.coordinatorEpoch, 2);
  return buildBatch({
    records: [{ key, value, timestamp: options.timestamp }],
    isControl: true,
    isTransactional: true,
    producerId: options.producerId,
    producerEpoch: options.producerEpoch,
    baseSequence: NO_SEQUENCE,
    baseOffset: options.baseOffset,
    partitionLeaderEpoch: options.partitionLeaderEpoch,
  });
}

export interface ControlRecord {
  version: number;
  /** Abort (0) and Commit (1) are transaction markers; other types exist (KRaft) and are passed through. */
  type: number;
  /** The transaction coordinator's epoch, for Abort and Commit markers. */
  coordinatorEpoch: number | null;
}

/** Reads the record of a control batch. */
export function decodeControlRecord(record: BatchRecord): ControlRecord {
  const key = record.key;
  if (key === null || key.length < 4) throw new DecodeError(`control record key needs 4 bytes, has ${key?.length ?? 'null'}`, 0);
  const version = key.readInt16BE(0);
  const type = key.readInt16BE(2);
  if (type !== ControlRecordType.Abort && type !== ControlRecordType.Commit) return { version, type, coordinatorEpoch: null };
  const value = record.value;
  if (value === null || value.length < 6) throw new DecodeError(`transaction marker value needs 6 bytes, has ${value?.length ?? 'null'}`, 0);
  return { version, type, coordinatorEpoch: value.readInt32BE(2) };
}
