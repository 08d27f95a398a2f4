/**
 * A core front over a fresh engine, for suites that drive an engine's clock,
 * maintenance or compactor (front.engine.maintenance) while calling the core
 * as every caller does.
 */
import { MemoryEngine, type MemoryEngineOptions } from '../../src/core/engines/memory/index.js';
import { openPostgresEngine, type PostgresEngine, type PostgresOpenOptions } from '../../src/core/engines/postgres/index.js';
import { CoreFront } from '../../src/core/front.js';
import type { CoordinatorOptions } from '../../src/core/groups/coordinator.js';

export function memoryFront(options: MemoryEngineOptions = {}, groups: Partial<CoordinatorOptions> = {}): CoreFront<MemoryEngine> {
  return new CoreFront(new MemoryEngine(options), groups);
}

export async function postgresFront(options: PostgresOpenOptions, groups: Partial<CoordinatorOptions> = {}): Promise<CoreFront<PostgresEngine>> {
  return new CoreFront(await openPostgresEngine(options), groups);
}
