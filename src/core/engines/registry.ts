/**
 * The engine registry: every storage engine by name, with how to open it.
 * Adding an engine is a folder under src/core/engines/ that implements
 * `Engine` (../engine.ts) and one line here; the CLI's --engine choices, the
 * `EngineName` type and openCore() all read this table.
 *
 * Each engine is imported only when opened, so the embedded default never
 * loads a database driver; what the CLI needs before that (an engine's
 * defaults for its flags) is exported here from small files of its own.
 */
import type { Engine } from '../engine.js';

export { defaultMemoryLimitBytes } from './memory/limits.js';

/** Options every engine receives; each takes the ones it knows and ignores the rest. */
export interface EngineOptions {
  [option: string]: unknown;
}

export interface EngineEntry {
  /** What the CLI's help says of it. */
  summary: string;
  open(options: EngineOptions): Promise<Engine>;
}

// Specifiers in variables keep the compiler from requiring an engine at build time.
const MEMORY_ENGINE = './memory/index.js';
const POSTGRES_ENGINE = './postgres/index.js';

export const ENGINES = {
  memory: { summary: 'memory (lost on exit)', open: async (options) => (await import(MEMORY_ENGINE)).openMemoryEngine(options) },
  postgres: { summary: 'postgres (durable; needs a database URL)', open: async (options) => (await import(POSTGRES_ENGINE)).openPostgresEngine(options) },
} satisfies Record<string, EngineEntry>;

export type EngineName = keyof typeof ENGINES;
export const ENGINE_NAMES = Object.keys(ENGINES) as EngineName[];

/** Opens the engine of that name, or says which names there are. */
export function openEngine(name: string, options: EngineOptions): Promise<Engine> {
  const entry = (ENGINES as Record<string, EngineEntry>)[name];
  if (!entry) throw new Error(`Unknown core engine ${JSON.stringify(name)}; choose ${ENGINE_NAMES.map((n) => JSON.stringify(n)).join(' or ')}.`);
  return entry.open(options);
}
