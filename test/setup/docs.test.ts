/**
 * The README and the book in docs/ say only what the tree has: every relative
 * link reaches a file (and every `#anchor` a heading of it), every `--flag`
 * they name is one the commands take, every `QUEEN_*` variable one they read,
 * every path in a code span a file or folder of the tree, every `npm run X` a
 * script of package.json; and the README stays short
 * enough to read in five minutes. Text that drifts from the code fails here,
 * naming the page and what it named.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BRIDGE_SETTINGS } from '../../src/cli/bridge-settings.js';
import { envName, SETTINGS } from '../../src/cli/settings.js';

const ROOT = resolve(import.meta.dirname, '../..');
const README_MAX_LINES = 200;

/** README.md and every page of docs/ (not its subfolders, which hold tool outputs and their own notes). */
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const text = (page: string) => readFileSync(join(ROOT, page), 'utf8');

/**
 * Flags of other tools the pages quote beside the gateway's own: npm's, Apache
 * Kafka's command-line tools', the reference broker's launcher's and the bench
 * runner's. Kept to the ones the pages use; a flag not here and not the
 * gateway's fails.
 */
const OTHER_TOOLS_FLAGS: Record<string, readonly string[]> = {
  npm: ['omit', 'no-save', 'dangerously-allow-all-scripts'],
  "Kafka's kafka-configs.sh and kafka-topics.sh (and --config of npm run apache-kafka)": ['bootstrap-server', 'alter', 'describe', 'entity-type', 'entity-name', 'add-config', 'delete-config', 'replication-factor', 'config', 'partitions', 'delete'],
  'the bench runner (test/bench/e2e/run.ts)': ['quick', 'brokers'],
  "Kafka's kafka-share-groups.sh (docs/share-groups.md)": ['group', 'topic', 'to-earliest', 'execute', 'delete-offsets', 'entity-type'],
  'the client matrix runner (test/compat/run.ts)': ['client', 'target', 'no-write', 'timeout-s', 'update'],
  'the fault campaign (test/campaign/main.ts)': ['records', 'minutes', 'seed', 'store'],
  "Queen's suites runner (test/queen-suites/main.ts)": ['engine', 'suite', 'only', 'group', 'echo', 'timeout-s'],
  "Kafka's kafka-metadata-quorum.sh, kafka-log-dirs.sh and kafka-consumer-groups.sh": ['status', 'replication', 'command-config', 'topic-list', 'list', 'create', 'reset-offsets'],
  'docker, docker compose, systemctl, systemd-notify, pg_dump and pg_basebackup (docs/deployment.md)': ['rm', 'build', 'now', 'ready', 'format', 'schema', 'dbname'],
  "pg_auto_failover's pg_autoctl (docs/failover.md)": ['pgdata', 'pgport', 'hostname', 'name', 'monitor', 'auth', 'ssl-self-signed', 'run'],
};

/** Misspelt names a page quotes to show the sentence a start answers them with (docs/configuration.md). */
const QUOTED_MISSPELLINGS = ['QUEEN_HTP_PORT'];

/** Every flag of serve, core and gateway (switches also as --no-...), of the bridge, and --help / --version. */
function gatewayFlags(): Set<string> {
  const flags = new Set<string>(['help', 'version']);
  for (const s of SETTINGS) {
    flags.add(s.flag);
    if (s.kind.type === 'bool') flags.add(`no-${s.flag}`);
  }
  for (const s of BRIDGE_SETTINGS) flags.add(s.flag);
  flags.add('config');
  return flags;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, ... */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const m of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = m[1]!
      .toLowerCase()
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
    seen.set(slug, n + 1);
  }
  return anchors;
}

/** The relative links of a page (inline and image links), outside code blocks and code spans. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/i.test(target));
}

/** What is wrong with one link of `page`, or null. */
function brokenLink(page: string, target: string): string | null {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? join(ROOT, page) : resolve(ROOT, dirname(page), decodeURIComponent(path));
  if (!file.startsWith(ROOT) || !existsSync(file)) return `${page}: the link ${target} points at ${relative(ROOT, file)}, which does not exist`;
  if (anchor === undefined) return null;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `${page}: the link ${target} has an anchor on something that is not a Markdown page`;
  return anchorsOf(readFileSync(file, 'utf8')).has(anchor) ? null : `${page}: the link ${target} names #${anchor}, a heading ${relative(ROOT, file)} does not have`;
}

/** What a page names that the tree does not have: flags, QUEEN_* variables, paths, npm scripts. */
function unknownNames(page: string, markdown: string): string[] {
  const flags = gatewayFlags();
  const others = new Set(Object.values(OTHER_TOOLS_FLAGS).flat());
  // Every setting's variable, the bridge's included, and QUEEN_CONFIG (the file's path); a misspelling a page quotes on purpose is listed.
  const variables = new Set([...SETTINGS, ...BRIDGE_SETTINGS].map((s) => envName(s.flag)).concat('QUEEN_CONFIG', ...QUOTED_MISSPELLINGS));
  const scripts = (JSON.parse(text('package.json')) as { scripts: Record<string, string> }).scripts;
  const problems: string[] = [];
  for (const m of markdown.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)) {
    // A family of flags named by its prefix (`--rpc-tls-*`) is checked by the flags it names elsewhere.
    if (m[1]!.endsWith('-')) continue;
    if (!flags.has(m[1]!) && !others.has(m[1]!)) problems.push(`${page}: --${m[1]} is not a flag of queen-gateway (src/cli/settings.ts) or its bridge (src/cli/bridge.ts)`);
  }
  for (const m of markdown.matchAll(/\bQUEEN_[A-Z0-9_]+/g)) {
    if (!variables.has(m[0])) problems.push(`${page}: ${m[0]} is not an environment variable of any setting in src/cli/settings.ts`);
  }
  // A path in a code span (`src/core/front.ts`); placeholders (`<name>`) and globs are not paths.
  for (const m of markdown.matchAll(/`((?:src|test|protocol|docs|compose|scripts|bench-results|bin|\.ci)\/[^`\s*<>]*)`/g)) {
    if (!existsSync(join(ROOT, m[1]!))) problems.push(`${page}: ${m[1]} does not exist`);
  }
  for (const m of markdown.matchAll(/\bnpm run ([a-z][\w:-]*)/g)) {
    if (scripts[m[1]!] === undefined) problems.push(`${page}: "npm run ${m[1]}" names no script of package.json`);
  }
  return [...new Set(problems)];
}

describe('the README and docs/ against the tree', () => {
  it('reads the pages and the flags it checks against (the checks have not gone blind)', () => {
    expect(PAGES).toContain('docs/README.md');
    expect(PAGES.length).toBeGreaterThan(5);
    expect(gatewayFlags()).toContain('rpc-secret');
    expect(gatewayFlags()).toContain('to-kafka');
    expect(anchorsOf('# A title\n## Bridge in reverse (gateway → Apache Kafka, for a rollback)\n## A title')).toEqual(
      new Set(['a-title', 'bridge-in-reverse-gateway--apache-kafka-for-a-rollback', 'a-title-1']),
    );
    expect(linksOf('[a](docs/x.md) `[b](no.md)` [c](https://example.com) ![d](e.svg)')).toEqual(['docs/x.md', 'e.svg']);
  });

  it(`keeps the README under ${README_MAX_LINES} lines`, () => {
    expect(text('README.md').split('\n').length).toBeLessThan(README_MAX_LINES);
  });

  it('docs/README.md, the index, links every page of docs/', () => {
    const index = linksOf(text('docs/README.md')).map((l) => l.split('#')[0]);
    const unlisted = PAGES.filter((p) => p.startsWith('docs/') && p !== 'docs/README.md' && !index.includes(p.slice('docs/'.length)));
    expect(unlisted.join('\n'), 'pages docs/README.md does not link').toBe('');
  });

  for (const page of PAGES) {
    it(`${page}: every relative link reaches a file, and every #anchor a heading`, () => {
      const broken = linksOf(text(page))
        .map((target) => brokenLink(page, target))
        .filter((problem) => problem !== null);
      expect(broken.join('\n')).toBe('');
    });

    it(`${page}: names only flags, QUEEN_* variables, paths and npm scripts that exist`, () => {
      expect(unknownNames(page, text(page)).join('\n')).toBe('');
    });
  }
});
