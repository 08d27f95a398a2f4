/**
 * A share-partition's state and the rules that change it (KIP-932), pure:
 * the service (./service.ts) runs each rule inside the engine's atomic unit
 * on the partition (EngineShares.update), which then stores the result.
 *
 * The state is the share-partition start offset (every record below it is
 * done) and the in-flight records from there: each AVAILABLE (may be
 * acquired), ACQUIRED (under a lock: an owner, the member, and a deadline;
 * this is the core's lease, stored, so it outlives the gateway that took it),
 * ACKNOWLEDGED (accepted) or ARCHIVED (rejected, exhausted, or no record at
 * that offset). A record's delivery count rises each time it is acquired.
 */

export type RecordState = 'available' | 'acquired' | 'acknowledged' | 'archived';

export interface InFlightRecord {
  offset: number;
  state: RecordState;
  deliveryCount: number;
  /** The member holding the lock while acquired; null otherwise. */
  owner: string | null;
  /** Epoch ms the lock runs out while acquired; 0 otherwise. */
  deadline: number;
}

export interface SharePartitionKey {
  group: string;
  queue: string;
  partition: number;
}

export interface SharePartitionState {
  startOffset: number;
  /** In offset order, each at or above startOffset. */
  records: InFlightRecord[];
}

/** A stored batch's offsets as the acquisition sees them. */
export interface BatchSpan {
  baseOffset: number;
  lastOffset: number;
  /** Control batches (transaction markers) hold no records a consumer gets. */
  control: boolean;
}

export interface AcquireLimits {
  owner: string;
  now: number;
  lockMs: number;
  maxRecords: number;
  /** Kafka's share.partition.max.record.locks: most records in flight at once. */
  maxInFlight: number;
}

/**
 * The records a change archived as failed (rejected, or their deliveries used
 * up), as the service hands them to Queen's dead-letter queue; records with
 * no data (GAP, control batches) are not failures and are not listed.
 */
export type FailedSink = { offset: number; deliveryCount: number; reason: 'rejected' | 'exhausted' }[];

/** A lock that ran out, or a released record, becomes available again unless its deliveries are used up. */
function giveBack(record: InFlightRecord, deliveryLimit: number, failed: FailedSink): void {
  record.state = record.deliveryCount >= deliveryLimit ? 'archived' : 'available';
  if (record.state === 'archived') failed.push({ offset: record.offset, deliveryCount: record.deliveryCount, reason: 'exhausted' });
  record.owner = null;
  record.deadline = 0;
}

/** Ends the locks past their deadline; answers whether any ended. */
export function expireLocks(state: SharePartitionState, now: number, deliveryLimit: number, failed: FailedSink = []): boolean {
  let changed = false;
  for (const r of state.records) {
    if (r.state === 'acquired' && r.deadline <= now) {
      giveBack(r, deliveryLimit, failed);
      changed = true;
    }
  }
  return changed;
}

/** Releases every lock `owner` holds (a member that left or was fenced); answers whether any was held. */
export function releaseOwner(state: SharePartitionState, owner: string, deliveryLimit: number, failed: FailedSink = []): boolean {
  let changed = false;
  for (const r of state.records) {
    if (r.state === 'acquired' && r.owner === owner) {
      giveBack(r, deliveryLimit, failed);
      changed = true;
    }
  }
  return changed;
}

/** The first offset past the in-flight records. */
export function inFlightEnd(state: SharePartitionState): number {
  const last = state.records[state.records.length - 1];
  return last === undefined ? state.startOffset : last.offset + 1;
}

/** Where a fetch reads from: the first available in-flight record, else the end of the in-flight records. */
export function nextFetchOffset(state: SharePartitionState): number {
  return state.records.find((r) => r.state === 'available')?.offset ?? inFlightEnd(state);
}

function acquireOne(record: InFlightRecord, limits: AcquireLimits): void {
  record.state = 'acquired';
  record.deliveryCount += 1;
  record.owner = limits.owner;
  record.deadline = limits.now + limits.lockMs;
}

/**
 * Acquires, for the owner, records of the batches read from the log: the
 * available in-flight ones, then new ones past the in-flight end, up to
 * maxRecords (whole batches are not split, as Kafka's batch-optimised mode
 * may exceed the count for alignment only; here the count is kept exactly).
 * Offsets past the end that hold no record (control batches, gaps) are
 * archived on the way so the start offset can move past them. Answers the
 * acquired records in offset order.
 */
export function acquire(state: SharePartitionState, spans: BatchSpan[], limits: AcquireLimits): InFlightRecord[] {
  const acquired: InFlightRecord[] = [];
  const byOffset = new Map(state.records.map((r) => [r.offset, r]));
  for (const span of spans) {
    for (let offset = Math.max(span.baseOffset, state.startOffset); offset <= span.lastOffset; offset++) {
      if (acquired.length >= limits.maxRecords) return acquired;
      const known = byOffset.get(offset);
      if (known !== undefined) {
        if (known.state === 'available' && !span.control) {
          acquireOne(known, limits);
          acquired.push(known);
        }
        continue;
      }
      const end = inFlightEnd(state);
      if (offset < end) continue;
      if (state.records.length >= limits.maxInFlight) return acquired;
      for (let gap = end; gap < offset; gap++) state.records.push({ offset: gap, state: 'archived', deliveryCount: 0, owner: null, deadline: 0 });
      const record: InFlightRecord = { offset, state: span.control ? 'archived' : 'available', deliveryCount: 0, owner: null, deadline: 0 };
      state.records.push(record);
      byOffset.set(offset, record);
      if (!span.control) {
        acquireOne(record, limits);
        acquired.push(record);
      }
    }
  }
  return acquired;
}

/** Acquired records as Kafka's AcquiredRecords: contiguous offsets with one delivery count each. */
export function acquiredRanges(records: InFlightRecord[]): { firstOffset: number; lastOffset: number; deliveryCount: number }[] {
  const ranges: { firstOffset: number; lastOffset: number; deliveryCount: number }[] = [];
  for (const r of records) {
    const last = ranges[ranges.length - 1];
    if (last !== undefined && last.lastOffset + 1 === r.offset && last.deliveryCount === r.deliveryCount) last.lastOffset = r.offset;
    else ranges.push({ firstOffset: r.offset, lastOffset: r.offset, deliveryCount: r.deliveryCount });
  }
  return ranges;
}

export interface Acknowledge {
  owner: string;
  firstOffset: number;
  lastOffset: number;
  /** One type for the whole range, or one per offset (0 gap, 1 accept, 2 release, 3 reject, 4 renew). */
  types: number[];
  now: number;
  lockMs: number;
  deliveryLimit: number;
  /** Where the records this archives as failed are listed. */
  failed?: FailedSink;
}

/**
 * Applies one acknowledgement batch: every offset in it must be acquired by
 * the owner, else nothing changes and the answer is false (Kafka's
 * INVALID_RECORD_STATE). ACCEPT acknowledges, RELEASE gives the record back
 * (archived once its deliveries are used up), REJECT and GAP archive, RENEW
 * extends the lock.
 */
export function acknowledge(state: SharePartitionState, ack: Acknowledge): boolean {
  const count = ack.lastOffset - ack.firstOffset + 1;
  if (count <= 0 || (ack.types.length !== 1 && ack.types.length !== count)) return false;
  const first = state.records.findIndex((r) => r.offset === ack.firstOffset);
  if (first < 0) return false;
  const slice = state.records.slice(first, first + count);
  if (slice.length !== count || slice.some((r) => r.state !== 'acquired' || r.owner !== ack.owner)) return false;
  if (ack.types.some((t) => t < 0 || t > 4)) return false;
  const failed = ack.failed ?? [];
  slice.forEach((record, i) => {
    const type = ack.types.length === 1 ? ack.types[0]! : ack.types[i]!;
    if (type === 1) Object.assign(record, { state: 'acknowledged', owner: null, deadline: 0 });
    else if (type === 2) giveBack(record, ack.deliveryLimit, failed);
    else if (type === 4) record.deadline = ack.now + ack.lockMs;
    else {
      if (type === 3) failed.push({ offset: record.offset, deliveryCount: record.deliveryCount, reason: 'rejected' });
      Object.assign(record, { state: 'archived', owner: null, deadline: 0 });
    }
  });
  return true;
}

/** Moves the start offset past the leading records that are done, and forgets them. */
export function advanceStart(state: SharePartitionState): void {
  let done = 0;
  while (done < state.records.length && (state.records[done]!.state === 'acknowledged' || state.records[done]!.state === 'archived')) done++;
  if (done === 0) return;
  state.startOffset = state.records[done - 1]!.offset + 1;
  state.records.splice(0, done);
}

/** Records from the start offset to the log's end not yet done (Kafka's share-partition lag). */
export function lag(state: SharePartitionState, highWatermark: number): number {
  const done = state.records.filter((r) => r.state === 'acknowledged' || r.state === 'archived').length;
  return Math.max(0, highWatermark - state.startOffset - done);
}
