/**
 * The RPC's method list, declared once: every Core call except close(),
 * with what the transport needs to know about it. Client and server are both
 * built from this table, so there is no per-method stub on either side; the
 * compiler refuses the table when the interface gains or loses a method.
 *
 * A method's wire number is its position here, so the handshake compares a
 * fingerprint of the whole list: a core and a gateway built from different
 * lists refuse each other with a clear message instead of calling the wrong
 * method.
 */
import { createHash } from 'node:crypto';
import { BatchPos } from '../../protocol/records/batch-header.js';
import type { AppendRequest, Core, PopRequest, ReadRequest } from '../core/core.js';

export type MethodName = Exclude<keyof Core, 'close'>;

export interface MethodTraits {
  /**
   * May the client send the call again after the connection dropped before it
   * was answered? True for calls that change nothing; a function decides per
   * request, after `keyed` has run (an append is safe to repeat only when its
   * requestId lets the core answer the repeat from its ledger).
   */
  retrySafe?: boolean | ((req: never) => boolean);
  /**
   * For a call the core can answer from a ledger when it is repeated: the
   * request with a fresh key from `mint` added, or the request unchanged when
   * it needs none. The client runs it once, before the first send, so a repeat
   * after a lost connection carries the same key and the core answers it with
   * the first outcome instead of applying the call twice. Callers never see
   * or supply these keys: whether the core is across the RPC is the RPC's
   * business.
   */
  keyed?: (req: never, mint: () => string) => unknown;
  /**
   * A long-poll: how long the core may legitimately hold the call, added to
   * the call timeout; null means it has no bound of its own (JoinGroup and
   * SyncGroup, which the coordinator's own timeouts end) and no deadline.
   */
  holds?: (req: never) => number | null;
}

const changesNothing = { retrySafe: true } as const;

export const METHODS = {
  createQueue: {},
  listQueues: changesNothing,
  describeQueue: changesNothing,
  deleteQueue: {},
  addPartitions: {},
  alterQueue: {},
  append: { keyed: keyAppend, retrySafe: (req: AppendRequest) => typeof req?.requestId === 'string' },
  read: { retrySafe: true, holds: (req: ReadRequest) => req?.maxWaitMs ?? 0 },
  offsets: changesNothing,
  partitionSizes: changesNothing,
  offsetForTimestamp: changesNothing,
  deleteRecords: {},
  initProducer: {},
  describeProducers: changesNothing,
  commitOffsets: {},
  fetchOffsets: changesNothing,
  deleteOffsets: {},
  listGroups: changesNothing,
  kvGet: changesNothing,
  kvGetMany: changesNothing,
  kvGetPrefix: changesNothing,
  kvPut: {},
  kvPutIfAbsent: {},
  kvDelete: {},
  kvIncr: {},
  once: {},
  push: {},
  pop: { holds: (req: PopRequest) => req?.waitMs ?? 0 },
  ack: {},
  renewLease: {},
  transaction: {},
  // A registration repeated finds its own; a cycle repeated is answered from its marker (replayed).
  streamsRegisterQuery: { retrySafe: true },
  streamsCycle: { retrySafe: true },
  streamsStateGet: changesNothing,
  joinGroup: { holds: () => null },
  syncGroup: { holds: () => null },
  heartbeat: {},
  leaveGroup: {},
  describeGroups: changesNothing,
  listGroupStates: changesNothing,
  deleteGroups: {},
  commitGroupOffsets: {},
  deleteGroupOffsets: {},
  consumerGroupHeartbeat: {},
  consumerGroupDescribe: changesNothing,
  checkOffsetFetchMember: changesNothing,
  streamsGroupHeartbeat: {},
  streamsGroupDescribe: changesNothing,
  // Share groups (KIP-932): a fetch acquires locks, so it is not repeated; it may wait up to maxWaitMs.
  shareGroupHeartbeat: {},
  shareGroupDescribe: changesNothing,
  shareFetch: { holds: (req: { maxWaitMs?: number }) => req?.maxWaitMs ?? 0 },
  shareAcknowledge: {},
  describeShareGroupOffsets: changesNothing,
  alterShareGroupOffsets: { retrySafe: true },
  deleteShareGroupOffsets: { retrySafe: true },
  describeShareGroupConfig: changesNothing,
  alterShareGroupConfig: { retrySafe: true },
  // Kafka transactions: each call repeated gives the same outcome (adding a
  // partition or group again changes nothing, an offset is written again with
  // its value, and EndTxn repeated finds the transaction ended the same way).
  addPartitionsToTxn: { retrySafe: true },
  addOffsetsToTxn: { retrySafe: true },
  txnOffsetCommit: { retrySafe: true },
  endTxn: { retrySafe: true },
  describeTransactions: changesNothing,
  listTransactions: changesNothing,
  unstableOffsets: changesNothing,
  // Adding a stored binding again changes nothing, and setting quota values is idempotent.
  createAcls: { retrySafe: true },
  listAcls: changesNothing,
  // A repeat would answer "nothing deleted" for what the first call deleted.
  deleteAcls: {},
  alterClientQuotas: { retrySafe: true },
  listClientQuotas: changesNothing,
  describeScramCredentials: changesNothing,
  alterScramCredentials: {},
  scramCredential: changesNothing,
  // A repeat finds its records there and answers already_there, writing nothing.
  appendAt: { retrySafe: true },
  // Taking a lease again that this node holds changes nothing.
  findCoordinators: { retrySafe: true },
} as const satisfies Record<MethodName, MethodTraits>;

/**
 * An idempotent producer's batches are keyed by producer id and sequence
 * already: the core answers their repeat from the producer's window, so they
 * need no ledger entry (which would cost PostgreSQL a row per append). Any
 * batch without a producer id (or too short to say) makes the call need one.
 */
function keyAppend(req: AppendRequest, mint: () => string): AppendRequest {
  if (req?.requestId !== undefined || !Array.isArray(req?.partitions)) return req;
  const unkeyed = req.partitions.some(
    (p) => !Buffer.isBuffer(p?.records) || p.records.length < BatchPos.ProducerId + 8 || p.records.readBigInt64BE(BatchPos.ProducerId) < 0n,
  );
  return unkeyed ? { ...req, requestId: mint() } : req;
}

export const METHOD_NAMES = Object.keys(METHODS) as MethodName[];

export function traitsOf(method: MethodName): MethodTraits {
  return METHODS[method] as MethodTraits;
}

/** Eight bytes naming the method list and its order; both ends of a connection must agree. */
export const METHOD_FINGERPRINT: Buffer = createHash('sha256').update(METHOD_NAMES.join(',')).digest().subarray(0, 8);
