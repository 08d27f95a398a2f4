/**
 * Runs each of Queen's suites against a gateway's HTTP API and reads its
 * results test by test (see suites.ts for where the suites come from).
 */
import { join, resolve } from 'node:path';
import { SKIPPED, SUITES_DIR, run, runCopy, type SuiteName, type TestResult } from './suites.js';

export interface SuiteRunOptions {
  /** The gateway's HTTP API, http://host:port. */
  url: string;
  /** PostgreSQL the suites' own pool connects to (they only clean Queen's tables with it). */
  databaseUrl: string;
  /** Run only these tests (names as the suite spells them); all when absent. */
  only?: string[];
  /** Leave these tests out (reported as skipped on request): e.g. the ones another change is making fast. */
  skip?: string[];
  /** JavaScript only: start at this test, in the suite's order (the ones before it are not run nor reported). */
  from?: string;
  /** Which group of the JavaScript suite: Queen's "human" tests or its streams tests. */
  group?: 'human' | 'stream';
  /** Bound on one JavaScript test, one pytest run, one go test run. */
  timeoutMs: number;
  echo?: boolean;
}

function pgEnvironment(databaseUrl: string): NodeJS.ProcessEnv {
  const url = new URL(databaseUrl);
  return {
    ...process.env,
    PG_HOST: url.hostname,
    PG_PORT: url.port || '5432',
    PG_DB: url.pathname.slice(1),
    PG_USER: decodeURIComponent(url.username),
    PG_PASSWORD: decodeURIComponent(url.password),
    DATABASE_URL: databaseUrl,
  };
}

function skippedResults(suite: SuiteName, names: string[]): TestResult[] {
  return names.filter((n) => SKIPPED[suite][n] !== undefined).map((name) => ({ name, outcome: 'skipped', detail: SKIPPED[suite][name]! }));
}

const ON_REQUEST = 'skipped on request (--skip)';

/** The JavaScript tests to run: the listed (or named) ones from `from` on, less those skipped on request. */
function selectJs(names: string[], options: SuiteRunOptions): { run: string[]; leftOut: TestResult[] } {
  const start = options.from === undefined ? 0 : names.indexOf(options.from);
  if (start < 0) throw new Error(`--from ${options.from}: the JavaScript suite has no such test`);
  const skip = new Set(options.skip ?? []);
  const chosen = names.slice(start);
  return { run: chosen.filter((n) => !skip.has(n)), leftOut: chosen.filter((n) => skip.has(n)).map((name) => ({ name, outcome: 'skipped', detail: ON_REQUEST })) };
}

/** The JavaScript suite's test names, as `node test-v2/run.js` lists them. */
async function listJs(cwd: string, env: NodeJS.ProcessEnv, group: 'human' | 'stream'): Promise<string[]> {
  const listed = await run('node', ['test-v2/run.js', '--list-the-tests--'], { cwd, env, timeoutMs: 60_000 });
  const heading = group === 'human' ? 'Human-written tests:' : 'queen-streams tests:';
  const lines = listed.output.split('\n');
  const start = lines.findIndex((l) => l.includes(heading));
  if (start < 0) throw new Error(`the JavaScript suite listed no "${heading}":\n${listed.output.slice(-2000)}`);
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^\s+- (\S+)$/.exec(line);
    if (!m) break;
    names.push(m[1]!);
  }
  return names;
}

/** Each JavaScript test in its own `node test-v2/run.js NAME`, so one that hangs is bounded alone. */
export async function runJs(options: SuiteRunOptions): Promise<TestResult[]> {
  const copy = runCopy('client-js', 'test-v2', '.js', options.url);
  try {
    return await runJsTests(copy.cwd, options);
  } finally {
    copy.remove();
  }
}

async function runJsTests(cwd: string, options: SuiteRunOptions): Promise<TestResult[]> {
  const env = { ...pgEnvironment(options.databaseUrl), QUEEN_URL: options.url };
  const { run: names, leftOut } = selectJs(options.only ?? (await listJs(cwd, env, options.group ?? 'human')), options);
  const results = [...leftOut, ...skippedResults('js', names)];
  for (const name of names.filter((n) => SKIPPED.js[n] === undefined)) {
    const started = Date.now();
    const r = await run('node', ['test-v2/run.js', name], { cwd, env, timeoutMs: options.timeoutMs, echo: options.echo });
    const line = r.output.split('\n').find((l) => l.startsWith(`✅ ${name}:`) || l.startsWith(`❌ ${name}:`));
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (r.timedOut) results.push({ name, outcome: 'failed', detail: `did not finish in ${options.timeoutMs / 1000} s` });
    else if (line?.startsWith('✅')) results.push({ name, outcome: 'passed', detail: `${seconds} s` });
    else results.push({ name, outcome: 'failed', detail: line ?? `no result line (exit ${r.code}): ${r.output.slice(-600)}` });
    if (!options.echo) process.stdout.write(`  js ${name}: ${results.at(-1)!.outcome} (${seconds} s)\n`);
  }
  return results;
}

/** pytest over the Python suite's tests/ (the streams folders only with group "stream"). */
export async function runPy(options: SuiteRunOptions): Promise<TestResult[]> {
  const copy = runCopy('client-py', 'tests', '.py', options.url);
  try {
    return await runPyTests(copy.cwd, options);
  } finally {
    copy.remove();
  }
}

async function runPyTests(cwd: string, options: SuiteRunOptions): Promise<TestResult[]> {
  const args = ['-m', 'pytest', '-rA', '-p', 'no:cacheprovider', '-o', 'asyncio_mode=auto'];
  if (options.group === 'stream') args.push('tests/streams_integration', 'tests/streams_unit');
  else args.push('tests', '--ignore=tests/streams_integration', '--ignore=tests/streams_unit');
  for (const name of Object.keys(SKIPPED.py)) args.push('--deselect', name);
  const only = options.only ? `(${options.only.map((n) => n.split('::').at(-1)).join(' or ')})` : null;
  const skip = options.skip ? `not (${options.skip.map((n) => n.split('::').at(-1)).join(' or ')})` : null;
  if (only || skip) args.push('-k', [only, skip].filter((k) => k !== null).join(' and '));
  const r = await run(resolve(SUITES_DIR, 'client-py/.venv/bin/python'), args, { cwd, env: pgEnvironment(options.databaseUrl), timeoutMs: options.timeoutMs, echo: options.echo });
  // The tests skipped by name are in the human group's folders only.
  const results = options.group === 'stream' ? [] : skippedResults('py', Object.keys(SKIPPED.py));
  for (const m of r.output.matchAll(/^(PASSED|FAILED|ERROR) (\S+)(?: - (.*))?$/gm)) {
    results.push({ name: m[2]!, outcome: m[1] === 'PASSED' ? 'passed' : 'failed', detail: m[3] ?? '' });
  }
  if (r.timedOut) results.push({ name: 'pytest', outcome: 'failed', detail: `did not finish in ${options.timeoutMs / 1000} s` });
  if (results.length === 0) results.push({ name: 'pytest', outcome: 'failed', detail: `no results (exit ${r.code}): ${r.output.slice(-1500)}` });
  return results;
}

/** `go test` over the Go suite's tests (streams_integration only with group "stream"). */
export async function runGo(options: SuiteRunOptions): Promise<TestResult[]> {
  const cwd = join(SUITES_DIR, 'client-go');
  const skip = [...Object.keys(SKIPPED.go), ...(options.skip ?? [])];
  const args = ['test', options.group === 'stream' ? './tests/streams_integration' : './tests', '-v', '-count=1', `-timeout=${Math.round(options.timeoutMs / 1000)}s`];
  if (skip.length > 0) args.push('-skip', `^(${skip.join('|')})$`);
  if (options.only) args.push('-run', `^(${options.only.join('|')})$`);
  // The suite reads QUEEN_SERVER_URL, its streams suite QUEEN_URL (unset, it tries localhost:6632 and skips itself when nobody answers).
  const env = { ...pgEnvironment(options.databaseUrl), QUEEN_SERVER_URL: options.url, QUEEN_URL: options.url };
  const r = await run('go', args, { cwd, env, timeoutMs: options.timeoutMs + 120_000, echo: options.echo });
  const results: TestResult[] = [...(options.group === 'stream' ? [] : skippedResults('go', skip)), ...(options.skip ?? []).map((name): TestResult => ({ name, outcome: 'skipped', detail: ON_REQUEST }))];
  for (const m of r.output.matchAll(/^--- (PASS|FAIL|SKIP): (\S+) \(([\d.]+s)\)$/gm)) {
    const outcome = m[1] === 'PASS' ? 'passed' : m[1] === 'FAIL' ? 'failed' : 'skipped';
    results.push({ name: m[2]!, outcome, detail: outcome === 'skipped' ? 'skipped by the suite itself' : m[3]! });
  }
  const ran = results.some((t) => t.detail !== ON_REQUEST && SKIPPED.go[t.name] === undefined);
  if (r.timedOut || !ran) results.push({ name: 'go test', outcome: 'failed', detail: `exit ${r.code}${r.timedOut ? ', timed out' : ''}: ${r.output.slice(-1500)}` });
  return results;
}

export const RUNNERS: Record<SuiteName, (options: SuiteRunOptions) => Promise<TestResult[]>> = { js: runJs, py: runPy, go: runGo };
