import { existsSync } from 'node:fs';

/**
 * Where the engine's .sql files are: beside this module, from source (tsx,
 * vitest) and in a build (`npm run build` copies them next to the built
 * engine); a build whose copies are missing falls back to the source tree it
 * was built from.
 */
export function sqlDirectory(name: 'sql' | 'migrations'): URL {
  const beside = new URL(`./${name}/`, import.meta.url);
  if (existsSync(beside)) return beside;
  // dist/src/core/engines/postgres/ → src/core/engines/postgres/
  const source = new URL(`../../../../../src/core/engines/postgres/${name}/`, import.meta.url);
  if (existsSync(source)) return source;
  throw new Error(`The postgres engine's ${name}/ directory is missing beside ${beside.pathname}; copy src/core/engines/postgres/${name}/ next to the built engine.`);
}
