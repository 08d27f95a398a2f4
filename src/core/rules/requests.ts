import type { AckRequest, AppendRequest, IsolationLevel, PartitionRef, PopRequest, ReadRequest } from '../core.js';
import { CoreError } from '../errors.js';
import { requireArray, requireInteger } from './arguments.js';
import { MAX_POP_BATCH } from './leases.js';
import { validateGroupName, validatePartitionName, validateQueueName } from './names.js';

/**
 * The shape checks every engine runs on a request before touching storage,
 * written once: a request that fails them changes nothing, whatever the engine.
 */

/** A list of (queue, partition) references, each with a valid queue name and an index. */
export function requirePartitionRefs<T extends PartitionRef>(value: unknown, field = 'partitions'): T[] {
  const parts = requireArray<T>(value, field);
  parts.forEach((p, i) => {
    validateQueueName(p?.queue);
    requireInteger(p.partition, `${field}[${i}].partition`);
  });
  return parts;
}

export function checkAppendRequest(req: AppendRequest): { partitions: AppendRequest['partitions']; requestId: string | undefined } {
  const partitions = requirePartitionRefs<AppendRequest['partitions'][number]>(req?.partitions);
  if (req.requestId !== undefined && (typeof req.requestId !== 'string' || req.requestId.length === 0)) {
    throw new CoreError('invalid_argument', 'requestId must be a non-empty string when given.');
  }
  if (req.recordsHandedOver !== undefined && typeof req.recordsHandedOver !== 'boolean') {
    throw new CoreError('invalid_argument', 'recordsHandedOver must be true or false when given.');
  }
  partitions.forEach((p, i) => {
    if (!Buffer.isBuffer(p.records)) throw new CoreError('invalid_argument', `partitions[${i}].records must be a Buffer of record batches.`);
  });
  return { partitions, requestId: req.requestId };
}

export function checkReadRequest(req: ReadRequest): {
  partitions: ReadRequest['partitions'];
  minBytes: number;
  maxWaitMs: number;
  maxBytes: number;
  isolation: IsolationLevel;
} {
  const partitions = requirePartitionRefs<ReadRequest['partitions'][number]>(req?.partitions);
  partitions.forEach((p, i) => {
    requireInteger(p.fetchOffset, `partitions[${i}].fetchOffset`);
    requireInteger(p.maxBytes, `partitions[${i}].maxBytes`);
  });
  if (req.isolation !== 'read_committed' && req.isolation !== 'read_uncommitted') {
    throw new CoreError('invalid_argument', `isolation must be "read_uncommitted" or "read_committed"; got ${JSON.stringify(req.isolation)}.`);
  }
  return {
    partitions,
    minBytes: requireInteger(req.minBytes, 'minBytes'),
    maxWaitMs: requireInteger(req.maxWaitMs, 'maxWaitMs'),
    maxBytes: requireInteger(req.maxBytes, 'maxBytes'),
    isolation: req.isolation,
  };
}

/** A pop's fields (the queue is looked up by the engine first). */
export function checkPopRequest(req: PopRequest): {
  partitionName: string | undefined;
  group: string;
  batch: number;
  waitMs: number;
  leaseMs: number | undefined;
} {
  const partitionName = req.partition === undefined ? undefined : validatePartitionName(req.partition);
  const group = validateGroupName(req.consumerGroup);
  if (typeof req.owner !== 'string' || req.owner.length === 0) {
    throw new CoreError('invalid_argument', 'owner must be a non-empty string naming the worker that holds the lease.');
  }
  return {
    partitionName,
    group,
    batch: requireInteger(req.batch, 'batch', 1, MAX_POP_BATCH),
    waitMs: requireInteger(req.waitMs, 'waitMs'),
    leaseMs: req.leaseMs === undefined ? undefined : requireInteger(req.leaseMs, 'leaseMs', 1),
  };
}

/** An ack's fields (the queue is looked up by the engine first). */
export function checkAckRequest(req: AckRequest): { partitionName: string; group: string } {
  const partitionName = validatePartitionName(req.partition);
  const group = validateGroupName(req.consumerGroup);
  requireInteger(req.offset, 'offset');
  if (req.status !== 'completed' && req.status !== 'failed') {
    throw new CoreError('invalid_argument', `status must be "completed" or "failed"; got ${JSON.stringify(req.status)}.`);
  }
  return { partitionName, group };
}
