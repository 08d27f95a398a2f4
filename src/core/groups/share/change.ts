/**
 * Changing share-partitions' states (KIP-932) on the engine: load every
 * share-partition a call touches at once, decide on each, store what changed
 * at once, and decide again on fresh states where another core stored first
 * (the engine refuses a store whose version moved: ../../engine.ts
 * EngineShares). Each decision therefore takes effect on the state it was
 * made from, as under a lock, with one load and one store per call instead
 * of a transaction per share-partition. The records a decision archived as
 * failed go to Queen's dead-letter queue once the decision is stored.
 */
import type { Engine, LoadedSharePartition, ShareWrite } from '../../engine.js';
import { writeDeadLetters } from './dead-letters.js';
import type { FailedSink, InFlightRecord, SharePartitionKey, SharePartitionState } from './partition-state.js';

/** A share-partition's decision: the state to store (undefined: unchanged; null: forget it) and the caller's answer. */
export interface ShareDecision<R> {
  state?: SharePartitionState | null;
  answer: R;
}

/** Decides on the i-th share-partition; `state` is the caller's to change; records it archives as failed go to `failed`. */
export type Decide<R> = (i: number, state: SharePartitionState | null, now: number, failed: FailedSink) => ShareDecision<R>;

/** A store refused this many times in a row (other cores storing first each time) is given up as an error. */
const MAX_ATTEMPTS = 100;

const sameRecord = (a: InFlightRecord, b: InFlightRecord) =>
  a.offset === b.offset && a.state === b.state && a.deliveryCount === b.deliveryCount && a.owner === b.owner && a.deadline === b.deadline;

function unchanged(before: SharePartitionState | null, after: SharePartitionState | null): boolean {
  if (before === null || after === null) return before === after;
  return before.startOffset === after.startOffset && before.records.length === after.records.length && before.records.every((r, i) => sameRecord(r, after.records[i]!));
}

function copy(state: SharePartitionState | null): SharePartitionState | null {
  return state === null ? null : { startOffset: state.startOffset, records: state.records.map((r) => ({ ...r })) };
}

/**
 * Decides on each of `keys` and stores the decisions (see the head of the
 * file); `loaded` is a load of the same keys already made, used for the first
 * decisions. Answers each key's answer, from the decision that was stored.
 */
export async function changeShares<R>(
  engine: Engine, group: string, keys: SharePartitionKey[], decide: Decide<R>, loaded?: { now: number; partitions: LoadedSharePartition[] },
): Promise<R[]> {
  const answers: R[] = new Array<R>(keys.length);
  const failed: FailedSink[] = keys.map(() => []);
  let pending = keys.map((_, i) => i);
  let current = loaded ?? (keys.length === 0 ? { now: 0, partitions: [] } : await engine.shares.load(keys));
  for (let attempt = 1; pending.length > 0; attempt++) {
    if (attempt > MAX_ATTEMPTS) throw new Error(`Share-partition states kept changing under ${MAX_ATTEMPTS} attempts to store a decision.`);
    const writes: ShareWrite[] = [];
    const writing: number[] = [];
    pending.forEach((i, j) => {
      const { state, version } = current.partitions[j]!;
      failed[i] = [];
      const decision = decide(i, copy(state), current.now, failed[i]!);
      answers[i] = decision.answer;
      if (decision.state === undefined || unchanged(state, decision.state)) return;
      writes.push({ key: keys[i]!, expected: version, state: decision.state });
      writing.push(i);
    });
    const stored = writes.length === 0 ? [] : await engine.shares.store(writes);
    pending = writing.filter((_, j) => !stored[j]);
    if (pending.length > 0) current = await engine.shares.load(pending.map((i) => keys[i]!));
  }
  for (const [i, key] of keys.entries()) if (failed[i]!.length > 0) await writeDeadLetters(engine, group, key.queue, key.partition, failed[i]!);
  return answers;
}
