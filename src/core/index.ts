/**
 * The Queen core: the `Core` interface, its errors, the front that serves it
 * (./front.ts) over a storage engine (./engine.ts), and `openCore`, which
 * opens an engine by name from the registry (./engines/registry.ts).
 */
import { CoreFront } from './front.js';
import type { Core } from './core.js';
import { openEngine, type EngineName, type EngineOptions } from './engines/registry.js';
import type { CoordinatorOptions } from './groups/coordinator.js';
import type { Logger } from 'pino';
import { CoreError, isCoreError } from './errors.js';
import type { ConsumerCoordinatorOptions } from './groups/consumer/coordinator.js';

export * from './core.js';
export type { Engine } from './engine.js';
export { CoreFront } from './front.js';
export { CoreError, isCoreError, type CoreErrorCode } from './errors.js';
export { defaultMemoryLimitBytes, ENGINE_NAMES, ENGINES, type EngineName, type EngineOptions } from './engines/registry.js';
export { DEFAULT_COORDINATOR_OPTIONS, type CoordinatorOptions } from './groups/coordinator.js';
export type * from './groups/types.js';
export type * from './groups/consumer/types.js';
export type * from './groups/share/types.js';
export type * from './groups/streams/types.js';
export { STREAMS_STATUS } from './groups/streams/types.js';
export { DEFAULT_CONSUMER_COORDINATOR_OPTIONS, type ConsumerCoordinatorOptions } from './groups/consumer/coordinator.js';

export interface OpenCoreOptions extends EngineOptions {
  engine: EngineName;
  /** Group coordinator settings (initial rebalance delay, session timeout bounds, group size). */
  groups?: Partial<CoordinatorOptions>;
  /**
   * How long to keep trying a store that does not answer yet (a PostgreSQL
   * still starting, or not reachable yet), each failed attempt logged, before
   * the last failure is thrown. Default 0: one attempt.
   */
  databaseWaitMs?: number;
  /** Where each failed attempt is logged while waiting. */
  log?: Logger;
  /** KIP-848 consumer group settings (heartbeat interval, session timeout, group size). */
  consumerGroups?: Partial<ConsumerCoordinatorOptions>;
}

/** The pause between attempts at opening a store that does not answer: from half a second, doubling, to 5 s. */
const FIRST_RETRY_MS = 500;
const LAST_RETRY_MS = 5_000;

/** Opens an engine and puts the core front, with the group coordinator, in front of it. */
export async function openCore(options: OpenCoreOptions): Promise<Core> {
  const { engine, groups, consumerGroups, databaseWaitMs = 0, ...engineOptions } = options;
  const giveUpAt = Date.now() + databaseWaitMs;
  for (let attempt = 1, pauseMs = FIRST_RETRY_MS; ; attempt++, pauseMs = Math.min(pauseMs * 2, LAST_RETRY_MS)) {
    try {
      return new CoreFront(await openEngine(engine, engineOptions), groups ?? {}, consumerGroups ?? {});
    } catch (e) {
      // Only "not answering" is worth waiting for; a wrong password or database name stays wrong.
      const remaining = giveUpAt - Date.now();
      if (!isCoreError(e) || e.code !== 'unavailable' || databaseWaitMs === 0) throw e;
      if (remaining <= 0) throw new CoreError('unavailable', `Waited ${databaseWaitMs} ms for the database (--database-wait-ms) and it still does not answer: ${e.message}`);
      const waitMs = Math.min(pauseMs, remaining);
      options.log?.warn({ attempt, retryInMs: waitMs, giveUpInMs: remaining, reason: e.message }, `the database does not answer yet; trying again in ${waitMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

// The core's own rules that its front ends apply to their input before they
// call it (a topic name, an ACL binding, a quota change, SCRAM limits), so one
// rule judges it on both sides of the call, and the native records' decoding
// (the core encodes a native push into a batch; native readers decode it).
// Front ends take them from here, never from ./rules/
// (test/setup/layering.test.ts holds them to that).
export { MAX_PARTITIONS } from './rules/arguments.js';
export { DEFAULT_PARTITION_NAME, validateQueueName } from './rules/names.js';
export { MAX_POP_BATCH } from './rules/leases.js';
export { DEFAULT_APPEND_LIMITS, storedBatchLimit } from './rules/batches.js';
export { decodeStoredBatch, toQueenMessage, type DecodedRecord } from './rules/native-records.js';
export { DEAD_LETTERS_NAMESPACE, messageKey } from './rules/dead-letters.js';
export { checkAclBinding, checkAclFilters, filterMatches, patternCovers, WILDCARD_HOST, WILDCARD_PRINCIPAL, WILDCARD_RESOURCE } from './rules/acls.js';
export { checkQuotaAlterations, quotaEntityKey } from './rules/quotas.js';
export { MAX_SCRAM_ITERATIONS, MIN_SCRAM_ITERATIONS, SCRAM_KEY_BYTES } from './rules/scram-credentials.js';
