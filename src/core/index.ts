/**
 * The Queen core: the `Core` interface, its errors, the front that serves it
 * (./front.ts) over a storage engine (./engine.ts), and `openCore`, which
 * opens an engine by name from the registry (./engines/registry.ts).
 */
import { CoreFront } from './front.js';
import type { Core } from './core.js';
import { openEngine, type EngineName, type EngineOptions } from './engines/registry.js';
import type { CoordinatorOptions } from './groups/coordinator.js';
import type { ConsumerCoordinatorOptions } from './groups/consumer/coordinator.js';

export * from './core.js';
export type { Engine } from './engine.js';
export { CoreFront } from './front.js';
export { CoreError, isCoreError, type CoreErrorCode } from './errors.js';
export { ENGINE_NAMES, ENGINES, type EngineName, type EngineOptions } from './engines/registry.js';
export { DEFAULT_COORDINATOR_OPTIONS, type CoordinatorOptions } from './groups/coordinator.js';
export type * from './groups/types.js';
export type * from './groups/consumer/types.js';
export { DEFAULT_CONSUMER_COORDINATOR_OPTIONS, type ConsumerCoordinatorOptions } from './groups/consumer/coordinator.js';

export interface OpenCoreOptions extends EngineOptions {
  engine: EngineName;
  /** Group coordinator settings (initial rebalance delay, session timeout bounds, group size). */
  groups?: Partial<CoordinatorOptions>;
  /** KIP-848 consumer group settings (heartbeat interval, session timeout, group size). */
  consumerGroups?: Partial<ConsumerCoordinatorOptions>;
}

/** Opens an engine and puts the core front, with the group coordinator, in front of it. */
export async function openCore(options: OpenCoreOptions): Promise<Core> {
  const { engine, groups, consumerGroups, ...engineOptions } = options;
  return new CoreFront(await openEngine(engine, engineOptions), groups ?? {}, consumerGroups ?? {});
}

// The core's own rules that its front ends apply to their input before they
// call it (a topic name, an ACL binding, a quota change, SCRAM limits), so one
// rule judges it on both sides of the call. Front ends take them from here,
// never from ./rules/ (test/setup/layering.test.ts holds them to that).
export { MAX_PARTITIONS } from './rules/arguments.js';
export { validateQueueName } from './rules/names.js';
export { checkAclBinding, checkAclFilters, filterMatches, patternCovers, WILDCARD_HOST, WILDCARD_PRINCIPAL, WILDCARD_RESOURCE } from './rules/acls.js';
export { checkQuotaAlterations, quotaEntityKey } from './rules/quotas.js';
export { MAX_SCRAM_ITERATIONS, MIN_SCRAM_ITERATIONS, SCRAM_KEY_BYTES, SCRAM_MECHANISMS } from './rules/scram-credentials.js';
