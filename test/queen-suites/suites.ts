/**
 * Queen's official client test suites (queen-mq/queen's clients/client-js
 * test-v2, client-py tests, client-go tests), as scripts/queen-suites-fetch.sh
 * leaves them in .tmp/queen-suites/src: how each lists and runs its tests
 * against a gateway's HTTP API, and which tests are skipped by name.
 *
 * The suites are run unchanged but for their server address: the JavaScript
 * and Python suites write `http://localhost:6632` into their sources, so the
 * runner rewrites that one constant, in a copy of the test folder of its own,
 * to the gateway it started; the Go suite reads QUEEN_SERVER_URL.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const SUITES_DIR = '.tmp/queen-suites/src';

export type SuiteName = 'js' | 'py' | 'go';
export type Outcome = 'passed' | 'failed' | 'skipped';

export interface TestResult {
  name: string;
  outcome: Outcome;
  /** For a failure, what the suite said; for a skip, why. */
  detail: string;
}

/**
 * Tests that read or write Queen's own database schema (its tables and
 * stored procedures in the `queen` schema: queen.messages,
 * queen.push_messages_v3, queen.consumer_watermarks, ...). The gateway keeps
 * its data in its own tables, so these cannot run; every other test must pass.
 * Listed in docs/testing.md as well.
 */
export const SKIPPED: Record<SuiteName, Record<string, string>> = {
  js: {
    producerSubRoundTripViaStoredProcedure: 'calls queen.push_messages_v3 and reads queen.messages',
    producerSubNullWhenNotProvided: 'reads queen.messages',
    producerSubEmptyStringStoredAsNull: 'reads queen.messages',
    producerSubIgnoredFromBodyWithoutAuth: 'reads queen.messages',
    producerSubStampedFromJwt: 'reads queen.messages',
    producerSubSpoofingIgnoredWithJwt: 'reads queen.messages',
    testPushProducerSubEmptyStringBecomesNull: 'reads queen.messages',
    seekBackwardsAllowsReconsume: 'reads and deletes queen.consumer_watermarks',
    deleteConsumerGroupAllowsReconsume: 'reads and deletes queen.consumer_watermarks',
    deleteConsumerGroupForQueueAllowsReconsume: 'reads and deletes queen.consumer_watermarks',
  },
  py: {
    'tests/test_auth.py::test_producer_sub_round_trip_via_stored_procedure': 'calls queen.push_messages_v2 and reads queen.messages',
    'tests/test_auth.py::test_producer_sub_null_when_not_provided': 'reads queen.messages',
    'tests/test_auth.py::test_producer_sub_empty_string_stored_as_null': 'reads queen.messages',
    'tests/test_auth.py::test_producer_sub_ignored_from_body_without_auth': 'reads queen.messages',
  },
  go: {
    TestProducerSubFieldDeserialisation: 'calls queen.push_messages_v2 and reads queen.messages',
    TestProducerSubBodyIgnoredWithoutAuth: 'reads queen.messages',
  },
};

/**
 * A private copy of a suite's test folder, pointed at `url`, for one run:
 * two runs at once (a manual run beside npm test's small form) never see
 * each other's address. The client's own sources, packages and virtual
 * environment are linked, not copied. Removed by the returned function.
 */
export function runCopy(client: 'client-js' | 'client-py', tests: string, extension: string, url: string): { cwd: string; remove: () => void } {
  const from = resolve(SUITES_DIR, client);
  const cwd = mkdtempSync(join(resolve(SUITES_DIR, '..'), `run-${client}-`));
  for (const entry of readdirSync(from)) {
    if (entry === tests) cpSync(join(from, entry), join(cwd, entry), { recursive: true });
    else symlinkSync(join(from, entry), join(cwd, entry));
  }
  pointAt(join(cwd, tests), extension, url);
  return { cwd, remove: () => rmSync(cwd, { recursive: true, force: true }) };
}

/** Rewrites Queen's default server address in a suite's sources to `url`. */
export function pointAt(dir: string, extension: string, url: string): number {
  let changed = 0;
  const walk = (path: string) => {
    for (const entry of readdirSync(path)) {
      if (entry === 'node_modules' || entry === '.venv') continue;
      const full = join(path, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (full.endsWith(extension)) {
        const text = readFileSync(full, 'utf8');
        const next = text.replace(/http:\/\/(?:localhost|127\.0\.0\.1):\d+/g, url);
        if (next !== text) {
          writeFileSync(full, next);
          changed += 1;
        }
      }
    }
  };
  walk(dir);
  return changed;
}

export interface Run {
  code: number | null;
  output: string;
  timedOut: boolean;
}

/** The process groups of the suites' commands still running: killed when the runner is stopped. */
const running = new Set<number>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const pid of running) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    process.exit(1);
  });
}

/** Runs a command to its end or to `timeoutMs`, killing its process group then. */
export function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; echo?: boolean }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid !== undefined) running.add(child.pid);
    let output = '';
    const take = (chunk: Buffer) => {
      output += chunk.toString();
      if (options.echo) process.stdout.write(chunk);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, options.timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      if (child.pid !== undefined) running.delete(child.pid);
      resolve({ code, output, timedOut });
    });
  });
}
