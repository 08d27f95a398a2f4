/**
 * Queen's multi-partition pop holds its partitions under one lease: one
 * leaseId on every message, one renew for them all. The core leases each
 * partition on its own, so a pop that claims several answers a shared lease
 * id that names them: `shared-<uuid>`, kept in the core's KV store (so any
 * gateway can use it) for as long as its leases may live. An ack with it
 * acts under the lease of the message's partition; a renew with it renews
 * every lease it names and answers the earliest deadline.
 */
import { randomUUID } from 'node:crypto';
import type { Core, Lease } from '../core/core.js';
import { isCoreError } from '../core/errors.js';

const NS = 'queen.shared-leases';
const PREFIX = 'shared-';
/** A shared id outlives its leases by this much, so an ack just after the deadline still learns the lease ended rather than that the id is unknown. */
const GRACE_MS = 60_000;

type Members = { partition: string; id: string }[];

/** The id to answer for these leases: the lease's own when there is one. */
export async function shareLeases(core: Core, leases: readonly Lease[], now: number): Promise<string> {
  if (leases.length === 1) return leases[0]!.id;
  const id = `${PREFIX}${randomUUID()}`;
  const value: Members = leases.map((l) => ({ partition: l.partition, id: l.id }));
  await core.kvPut({ ns: NS, key: id, value, lifetime: { ttlMs: ttlOf(leases, now) } });
  return id;
}

/** The core's lease id for a message of `partition` acked with `leaseId` (unchanged unless it is a shared id). */
export async function leaseOfPartition(core: Core, leaseId: string, partition: string): Promise<string> {
  if (!leaseId.startsWith(PREFIX)) return leaseId;
  const members = (await core.kvGet({ ns: NS, key: leaseId }))?.value as Members | undefined;
  // An unknown or foreign shared id is passed on: the core refuses it as a lease it does not hold.
  return members?.find((m) => m.partition === partition)?.id ?? leaseId;
}

/** Renews a lease, or every lease a shared id names; the answer carries the id asked with and the earliest new deadline. */
export async function renewLeases(core: Core, leaseId: string, extendMs: number, now: number): Promise<Lease> {
  if (!leaseId.startsWith(PREFIX)) return core.renewLease({ leaseId, extendMs });
  const entry = await core.kvGet({ ns: NS, key: leaseId });
  const members = entry?.value as Members | undefined;
  if (!members) return core.renewLease({ leaseId, extendMs }); // answered unknown_lease by the core
  const renewed: Lease[] = [];
  for (const m of members) {
    try {
      renewed.push(await core.renewLease({ leaseId: m.id, extendMs }));
    } catch (e) {
      // A partition acked in full has ended its lease: the rest are still renewed.
      if (!isCoreError(e) || e.code !== 'unknown_lease') throw e;
    }
  }
  if (renewed.length === 0) return core.renewLease({ leaseId: members[0]!.id, extendMs });
  await core.kvPut({ ns: NS, key: leaseId, value: members, lifetime: { ttlMs: ttlOf(renewed, now) } });
  const earliest = renewed.reduce((a, b) => (b.deadline < a.deadline ? b : a));
  return { ...earliest, id: leaseId };
}

function ttlOf(leases: readonly Lease[], now: number): number {
  return Math.max(...leases.map((l) => l.deadline)) - now + GRACE_MS;
}
