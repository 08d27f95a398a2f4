/**
 * The layering DESIGN.md draws, read from the source tree, so it stays true
 * as files are added: data flows down and nothing imports upward.
 *
 * - protocol/ (the wire format) imports nothing from src/.
 * - The core knows no front end: src/core imports nothing from the gateway,
 *   the RPC, the HTTP API, the bridge, the CLI or the client.
 * - The gateway reaches the core only through src/core/index.ts, the core's
 *   one front door; its engines, rules and coordinator stay behind it.
 * - A handler imports no other handler: what two handlers share lives in a
 *   room of the gateway (topics.ts, config-resources.ts, ...), not in one of them.
 * - src/client (Queen's HTTP client) takes only types from the core.
 * - No import circles, type-only imports included.
 *
 * Imports are read as text (static `import`/`export ... from` and literal
 * dynamic `import()`), which is all this code base uses.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every relative import of `file`, resolved to a repository path. */
function importsOf(file: string): Edge[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const edges: Edge[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const specifier = m[3] ?? m[4]!;
    if (!specifier.startsWith('.')) continue;
    const to = relative(ROOT, resolve(ROOT, dirname(file), specifier)).replace(/\.js$/, '.ts');
    edges.push({ from: file, to, typeOnly: m[2] !== undefined });
  }
  return edges;
}

const FILES = [...sourceFiles('protocol'), ...sourceFiles('src')];
const EDGES = FILES.flatMap(importsOf);

function violations(rule: (edge: Edge) => boolean): string[] {
  return EDGES.filter(rule).map((e) => `${e.from} -> ${e.to}`);
}

const within = (path: string, folder: string) => path.startsWith(`${folder}/`);
const isHandler = (path: string) => within(path, 'src/gateway/handlers') && path !== 'src/gateway/handlers/index.ts';

describe('the layering, read from the source tree', () => {
  it('finds the imports it checks (the reader has not gone blind)', () => {
    expect(FILES.length).toBeGreaterThan(100);
    expect(EDGES.some((e) => e.from === 'src/gateway/server.ts' && e.to === 'src/gateway/connection.ts')).toBe(true);
    expect(EDGES.some((e) => e.from === 'src/core/index.ts' && e.to === 'src/core/engines/postgres/index.ts')).toBe(false); // a specifier in a variable, on purpose
  });

  it('protocol/ imports nothing from src/', () => {
    expect(violations((e) => within(e.from, 'protocol') && !within(e.to, 'protocol'))).toEqual([]);
  });

  it('the core imports no front end', () => {
    const above = ['src/gateway', 'src/rpc', 'src/http', 'src/bridge', 'src/cli', 'src/client'];
    expect(violations((e) => within(e.from, 'src/core') && (above.some((f) => within(e.to, f)) || e.to === 'src/index.ts'))).toEqual([]);
  });

  it('the gateway reaches the core only through src/core/index.ts', () => {
    expect(violations((e) => within(e.from, 'src/gateway') && within(e.to, 'src/core') && e.to !== 'src/core/index.ts')).toEqual([]);
  });

  it('a handler imports no other handler', () => {
    expect(violations((e) => isHandler(e.from) && within(e.to, 'src/gateway/handlers'))).toEqual([]);
  });

  it('the HTTP client takes only types from the core, and none of its rules', () => {
    expect(violations((e) => within(e.from, 'src/client') && within(e.to, 'src/core') && (!e.typeOnly || within(e.to, 'src/core/rules')))).toEqual([]);
  });

  it('has no import circles, type-only imports included', () => {
    const next = new Map<string, string[]>();
    for (const e of EDGES) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const path: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      path.push(file);
      for (const to of next.get(file) ?? []) {
        if (state.get(to) === 'open') circles.push([...path.slice(path.indexOf(to)), to].join(' -> '));
        else if (!state.has(to)) visit(to);
      }
      path.pop();
      state.set(file, 'done');
    };
    for (const file of FILES) if (!state.has(file)) visit(file);
    expect(circles).toEqual([]);
  });
});
