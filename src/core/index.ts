/**
 * The Queen core: the `Core` interface, its errors, and `openCore`, which opens
 * an engine by name. The PostgreSQL engine is imported only when asked for, so
 * the embedded default never loads a database driver.
 */
import type { Core } from './core.js';
import { openMemoryCore, type MemoryCoreOptions } from './engines/memory/index.js';
import type { CoordinatorOptions } from './groups/coordinator.js';
import { withGroupCoordinator, type QueenCore } from './queen-core.js';

export * from './core.js';
export { CoreError, isCoreError, type CoreErrorCode } from './errors.js';
export { MemoryCore, openMemoryCore, type MemoryCoreOptions } from './engines/memory/index.js';
export { CoordinatedCore, withGroupCoordinator, type QueenCore } from './queen-core.js';
export { DEFAULT_COORDINATOR_OPTIONS, type CoordinatorOptions } from './groups/coordinator.js';
export type * from './groups/types.js';

export interface OpenMemoryCoreOptions extends MemoryCoreOptions {
  engine: 'memory';
  /** Group coordinator settings (initial rebalance delay, session timeout bounds, group size). */
  groups?: Partial<CoordinatorOptions>;
}

/** The PostgreSQL engine's own options (connection, pool, ...) travel through untouched. */
export interface OpenPostgresCoreOptions {
  engine: 'postgres';
  groups?: Partial<CoordinatorOptions>;
  [option: string]: unknown;
}

export type OpenCoreOptions = OpenMemoryCoreOptions | OpenPostgresCoreOptions;

// A specifier in a variable keeps the compiler from requiring the engine at build time.
const POSTGRES_ENGINE = './engines/postgres/index.js';

/** Opens an engine and puts the group coordinator in front of it. */
export async function openCore(options: OpenCoreOptions): Promise<QueenCore> {
  const { groups, ...engineOptions } = options;
  return withGroupCoordinator(await openEngine(engineOptions as OpenCoreOptions), (groups as Partial<CoordinatorOptions> | undefined) ?? {});
}

async function openEngine(options: OpenCoreOptions): Promise<Core> {
  switch (options.engine) {
    case 'memory': {
      const { engine: _engine, ...memoryOptions } = options;
      return openMemoryCore(memoryOptions);
    }
    case 'postgres': {
      const { openPostgresCore } = (await import(POSTGRES_ENGINE)) as { openPostgresCore(options: Record<string, unknown>): Promise<Core> };
      const { engine: _engine, ...postgresOptions } = options;
      return openPostgresCore(postgresOptions);
    }
    default:
      throw new Error(`Unknown core engine ${JSON.stringify((options as { engine: unknown }).engine)}; choose "memory" or "postgres".`);
  }
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
