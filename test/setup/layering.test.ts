/**
 * The layering DESIGN.md draws, read from the source tree, so it stays true
 * as files are added: data flows down and nothing imports upward.
 *
 * - Every room imports only the rooms ROOMS below allows it: the one table
 *   where the layering is read. In particular the front doors (gateway, HTTP
 *   API, bridge) never import one another, only the composition roots
 *   (src/cli, src/index.ts) import several of them, the core imports no front
 *   door and no cluster code, and the shared rooms below the front doors
 *   (topic-configs, access, redis, metrics, tls, ids) import no front door.
 * - protocol/ (the wire format) imports nothing from src/.
 * - The core knows no front end: src/core imports nothing from the gateway,
 *   the RPC, the HTTP API, the bridge, the CLI or the client.
 * - The gateway reaches the core only through src/core/index.ts, the core's
 *   one front door; its engines, rules and coordinator stay behind it. Every
 *   other room reaches the core through its interface files (index.ts,
 *   core.ts, errors.ts) and nothing deeper; core.ts itself, the interface,
 *   imports nothing but the group types it extends.
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

/** The doors requests come in by; each is a room of its own, and none reaches into another. */
const FRONT_DOORS = ['src/gateway', 'src/http', 'src/bridge'];
/** The composition roots: the only rooms that put several front doors together. */
const COMPOSITION_ROOTS = ['src/cli', 'src/index.ts'];

/**
 * Room -> the rooms it may import (its own files always). A room is a folder
 * of src/ (or src/index.ts, or protocol/); a new folder needs a row here
 * before it builds, so where it sits is decided once, in this table.
 */
const ROOMS: Readonly<Record<string, readonly string[]>> = {
  protocol: [],
  'src/ids': [],
  'src/tls': [],
  'src/redis': [],
  // Instruments (counters, histograms, the process registry): below everything that counts.
  'src/metrics': ['protocol'],
  'src/core': ['protocol', 'src/ids', 'src/redis', 'src/metrics'],
  'src/rpc': ['protocol', 'src/core', 'src/tls', 'src/metrics'],
  'src/cluster': ['src/redis'],
  // What an operator reads of a running process: health, readiness, the core's state as metrics.
  'src/operations': ['protocol', 'src/core', 'src/metrics'],
  'src/topic-configs': ['protocol', 'src/core'],
  'src/access': ['protocol', 'src/core'],
  'src/client': ['src/core', 'src/ids'],
  // A Kafka client on the project's own codecs (the bridge reads its source with it).
  'src/kafka-client': ['protocol'],
  'src/gateway': ['protocol', 'src/core', 'src/cluster', 'src/tls', 'src/ids', 'src/metrics', 'src/topic-configs', 'src/access'],
  'src/http': ['protocol', 'src/core', 'src/rpc', 'src/tls', 'src/ids', 'src/metrics', 'src/operations', 'src/topic-configs', 'src/access'],
  'src/bridge': ['protocol', 'src/core', 'src/rpc', 'src/tls', 'src/metrics', 'src/operations', 'src/topic-configs', 'src/kafka-client'],
  'src/index.ts': ['protocol', 'src/core', 'src/rpc', 'src/cluster', 'src/redis', 'src/tls', 'src/ids', 'src/metrics', 'src/operations', 'src/topic-configs', 'src/access', 'src/client', 'src/gateway', 'src/http', 'src/bridge'],
  'src/cli': ['protocol', 'src/core', 'src/rpc', 'src/cluster', 'src/redis', 'src/tls', 'src/ids', 'src/metrics', 'src/operations', 'src/topic-configs', 'src/access', 'src/index.ts', 'src/gateway', 'src/http', 'src/bridge'],
};

/** The room a file is in: protocol/, src/index.ts, or the folder of src/ it sits in. */
function roomOf(path: string): string {
  if (within(path, 'protocol')) return 'protocol';
  const [, folder, rest] = path.split('/');
  return rest === undefined ? path : `src/${folder}`;
}
const isHandler = (path: string) => within(path, 'src/gateway/handlers') && path !== 'src/gateway/handlers/index.ts';

describe('the layering, read from the source tree', () => {
  it('finds the imports it checks (the reader has not gone blind)', () => {
    expect(FILES.length).toBeGreaterThan(100);
    expect(EDGES.some((e) => e.from === 'src/gateway/server.ts' && e.to === 'src/gateway/connection.ts')).toBe(true);
    expect(EDGES.some((e) => e.from === 'src/core/index.ts' && e.to === 'src/core/engines/postgres/index.ts')).toBe(false); // a specifier in a variable, on purpose
  });

  it('every room of src/ has a row in the table of rooms', () => {
    expect([...new Set(FILES.map(roomOf))].filter((room) => !(room in ROOMS)).sort()).toEqual([]);
  });

  it('the table keeps the front doors apart: only the composition roots list another front door, and only they list several', () => {
    const listing = Object.entries(ROOMS)
      .filter(([room, allowed]) => !COMPOSITION_ROOTS.includes(room) && allowed.some((to) => FRONT_DOORS.includes(to)))
      .map(([room]) => room);
    expect(listing).toEqual([]);
    expect(ROOMS['src/core']).not.toContain('src/cluster');
  });

  it('each room imports only the rooms the table allows it', () => {
    expect(violations((e) => roomOf(e.from) !== roomOf(e.to) && !(ROOMS[roomOf(e.from)] ?? []).includes(roomOf(e.to)))).toEqual([]);
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

  it('outside the core, only its interface files are imported (never an engine, a rule or a coordinator)', () => {
    const face = ['src/core/index.ts', 'src/core/core.ts', 'src/core/errors.ts'];
    expect(violations((e) => !within(e.from, 'src/core') && within(e.to, 'src/core') && !face.includes(e.to))).toEqual([]);
  });

  it('the Core interface (core.ts and its request types in api/) is plain data of its own: it imports only its api/ files and the group types it extends, never a rule or an engine', () => {
    const groupTypes = ['src/core/groups/types.ts', 'src/core/groups/consumer/types.ts', 'src/core/groups/share/types.ts', 'src/core/groups/streams/types.ts'];
    expect(violations((e) => e.from === 'src/core/core.ts' && !groupTypes.includes(e.to) && !within(e.to, 'src/core/api'))).toEqual([]);
    expect(violations((e) => within(e.from, 'src/core/api') && !within(e.to, 'src/core/api'))).toEqual([]);
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
