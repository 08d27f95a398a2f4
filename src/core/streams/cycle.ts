import type { Core, PushItemResult, StreamsCycleRequest, StreamsCycleResult, TransactionOperation, TransactionResult } from '../core.js';
import { CoreError, isCoreError } from '../errors.js';
import { requireArray, requireInteger, requireJsonValue } from '../rules/arguments.js';
import { DEAD_LETTERS_NAMESPACE, messageKey } from '../rules/dead-letters.js';
import { validateGroupName } from '../rules/names.js';
import { checkSource, CYCLE_MARKER_TTL_MS, cycleMarkerKey, requireText, shardPrefix, STREAMS_NAMESPACE as ns } from './keys.js';
import type { FlushGuard } from './flush-guard.js';
import { queryById } from './registry.js';

/** Most offsets one cycle acks. */
const MAX_ACKED = 100_000;
/** Without a position or a count, how far back from the named offset a cycle's batch may begin. */
const DEFAULT_BATCH_REACH = 1000;

/**
 * One streaming cycle, all or nothing: its state writes, its output pushes
 * and the acks of the source messages it consumed commit as one native
 * transaction (../native/transaction.ts), so a crash before the commit leaves
 * the messages to be delivered again with the state as it was, and one after
 * it leaves nothing to redo.
 *
 * Exactly once: a cycle that acks writes a marker (a once gate keyed by the
 * query, the partition, the group and the last acked offset) in the same
 * transaction. A repeat of a committed cycle (the client retrying after a lost
 * answer) finds the marker and is answered `replayed`, applying nothing again.
 *
 * The ack names the cycle's last message; every offset from the group's
 * position up to it is acked (Queen acks a batch by its last message). With
 * `releaseLease` the rest of the lease, if any, is handed back to be
 * delivered again; without it (a gate's partial ack) it stays leased until
 * its deadline. An ack with a dead letter (the client failed the message)
 * writes it to the dead-letter queue beside the acks and always releases.
 */
export async function runCycle(core: Core, guard: FlushGuard, req: StreamsCycleRequest, now: number): Promise<StreamsCycleResult> {
  const queryId = requireText(req?.queryId, 'queryId');
  const source = checkSource(req.source);
  const group = validateGroupName(req.consumerGroup);
  if (!(await queryById(core, queryId))) return failed(`No streaming query has id ${queryId}: register it (POST /streams/v1/queries) first.`);
  const marker = req.ack ? cycleMarkerKey(queryId, source, group, requireInteger(req.ack.offset, 'ack.offset')) : null;
  const ops: TransactionOperation[] = [];
  if (marker) ops.push({ op: 'once', ns, key: marker, lifetime: { ttlMs: CYCLE_MARKER_TTL_MS } });
  const firstPush = ops.length;
  const pushItems = requireArray<StreamsCycleRequest['pushItems'][number]>(req.pushItems ?? [], 'pushItems');
  for (const item of pushItems) ops.push({ op: 'push', ifStored: 'answer', ...item });
  const stateOps = requireArray<StreamsCycleRequest['stateOps'][number]>(req.stateOps ?? [], 'stateOps');
  const prefix = shardPrefix(queryId, source);
  // A flush (no ack) that closes windows from a stale read applies nothing; the windows stay for the next one (./flush-guard.ts).
  const flush = !req.ack && stateOps.some((op) => op?.type === 'delete');
  if (flush && guard.flushIsStale(prefix)) return skipped();
  for (const [i, op] of stateOps.entries()) ops.push(stateOperation(op, prefix, now, `stateOps[${i}]`));
  const ackOps = req.ack ? await ackOperations(core, req, group) : [];
  ops.push(...ackOps);
  let outcome: TransactionResult;
  try {
    const commit = core.transaction({ operations: ops, createQueues: true });
    // No await since the stale check: a main-loop read from here on waits for this commit.
    if (flush) guard.noteFlushCommitting(prefix, commit);
    outcome = await commit;
  } catch (e) {
    if (!isCoreError(e)) throw e;
    return (await committedBefore(core, marker)) ? replayed(req) : failed(e.message);
  }
  if (!outcome.success) {
    if (outcome.reason === 'kv_precondition' && outcome.failedIndex === 0 && marker) return replayed(req);
    return (await committedBefore(core, marker)) ? replayed(req) : failed(outcome.message);
  }
  if (req.ack) guard.noteMainCommit(prefix);
  const pushResults = outcome.results.slice(firstPush, firstPush + pushItems.length) as PushItemResult[];
  const completed = ackOps.filter((op) => op.op === 'ack' && op.status === 'completed').length;
  const acked = outcome.results.slice(ops.length - ackOps.length, ops.length - ackOps.length + completed).filter((r) => (r as { acked?: boolean }).acked).length;
  return {
    success: true, stateOpsApplied: stateOps.length, pushResults, replayed: false,
    ack: req.ack ? { acked, leaseReleased: releases(req), deadLettered: req.ack.deadLetter !== undefined } : null,
  };
}

function stateOperation(op: StreamsCycleRequest['stateOps'][number], prefix: string, now: number, field: string): TransactionOperation {
  const key = prefix + requireText(op?.key, `${field}.key`);
  if (op.type === 'delete') return { op: 'kv.delete', ns, key };
  if (op.type !== 'upsert') return badStateOp(op, field);
  const value = op.value === undefined ? {} : op.value;
  requireJsonValue(value, `${field}.value`);
  return { op: 'kv.put', ns, key, value: { v: value, at: now }, lifetime: { forever: true } };
}

function badStateOp(op: { type?: unknown }, field: string): never {
  throw new CoreError('invalid_argument', `${field}.type must be "upsert" or "delete"; got ${JSON.stringify(op.type)}.`);
}

/** The acks: every offset from the group's position to the named one (the named one required, under its lease), then the release. */
async function ackOperations(core: Core, req: StreamsCycleRequest, group: string): Promise<TransactionOperation[]> {
  const { queue, partition } = req.source;
  const last = req.ack!.offset;
  const info = await core.describeQueue({ name: queue });
  const index = info?.partitions.find((p) => p.name === partition)?.index;
  let from = last;
  if (index !== undefined) {
    const [committed] = (await core.fetchOffsets({ group, partitions: [{ queue, partition: index }] })).offsets;
    if (committed && committed.offset >= 0) {
      from = Math.min(last, Math.max(committed.offset, last - MAX_ACKED + 1));
    } else {
      // No position yet: the batch began where the log does, or `count` messages back.
      const [bounds] = (await core.offsets({ partitions: [{ queue, partition: index }] })).partitions;
      const reach = Math.min(req.ack!.count === undefined ? DEFAULT_BATCH_REACH : requireInteger(req.ack!.count, 'ack.count', 1), MAX_ACKED);
      from = Math.min(last, Math.max(bounds?.logStartOffset ?? 0, last - reach + 1));
    }
  }
  const base = { op: 'ack' as const, queue, partition, consumerGroup: group, status: 'completed' as const };
  const ops: TransactionOperation[] = [];
  for (let offset = from; offset < last; offset++) ops.push({ ...base, offset, required: false });
  ops.push({ ...base, offset: last, required: true, ...(req.ack!.leaseId ? { leaseId: req.ack!.leaseId } : {}) });
  if (req.ack!.deadLetter !== undefined && index !== undefined) {
    requireJsonValue(req.ack!.deadLetter, 'ack.deadLetter');
    ops.push({ op: 'kv.put', ns: DEAD_LETTERS_NAMESPACE, key: messageKey(queue, index, last, group), value: req.ack!.deadLetter, lifetime: { forever: true } });
  }
  // A failed ack ends the lease where it still holds messages past the last one; the position stays, so they come again.
  if (releases(req)) ops.push({ ...base, offset: last + 1, status: 'failed', required: false });
  return ops;
}

const releases = (req: StreamsCycleRequest): boolean => req.releaseLease !== false || req.ack?.deadLetter !== undefined;

async function committedBefore(core: Core, marker: string | null): Promise<boolean> {
  return marker !== null && (await core.kvGet({ ns, key: marker })) !== null;
}

const failed = (error: string): StreamsCycleResult => ({ success: false, stateOpsApplied: 0, pushResults: [], ack: null, replayed: false, error });

const skipped = (): StreamsCycleResult => ({ success: true, stateOpsApplied: 0, pushResults: [], ack: null, replayed: false, skipped: true });

const replayed = (req: StreamsCycleRequest): StreamsCycleResult => ({
  success: true, stateOpsApplied: 0, pushResults: [], replayed: true,
  ack: req.ack ? { acked: 0, leaseReleased: releases(req), deadLettered: req.ack.deadLetter !== undefined } : null,
});
