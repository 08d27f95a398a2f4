/**
 * The README's commands are the ones CI runs, and its "try it" block works.
 *
 * The Quick start names two commands: the first starts the gateway, the
 * second (`npm test`) prepares the machine and runs the suite. `.ci/run` must
 * run the locked form of the first (`npm ci`) and exactly the second; when
 * either file changes without the other, this fails. The Try it block and
 * the kafkajs block of "From a program" run against a gateway.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(`${ROOT}README.md`, 'utf8');
const ciRun = readFileSync(`${ROOT}.ci/run`, 'utf8');
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> };
const run = promisify(execFile);

/** The text of a `## ` or `### ` section, up to the next heading of the same or a higher level. */
function section(heading: string): string {
  const level = heading.match(/^#+/)![0].length;
  const start = readme.indexOf(`\n${heading}\n`);
  expect(start, `README has a "${heading}" section`).toBeGreaterThanOrEqual(0);
  const rest = readme.slice(start + heading.length + 2);
  const next = rest.search(new RegExp(`^#{1,${level}} `, 'm'));
  return next < 0 ? rest : rest.slice(0, next);
}

/** The lines of the shell blocks in a section, with backslash continuations joined. */
function shellLines(text: string): string[] {
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks.flatMap((b) => b.replace(/\\\n\s*/g, '').split('\n')).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

/** The commands .ci/run executes: every line that is not a comment, an echo, or shell set-up. */
function ciCommands(): string[] {
  return ciRun
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !/^(set |cd |echo |export )/.test(l));
}

describe('the README Quick start and .ci/run', () => {
  const [first, second, ...more] = shellLines(section('## Quick start').split('\n### ')[0]!);

  it('names two commands: npm install && npm start, then npm test', () => {
    expect(more).toEqual([]);
    expect(first).toBe('npm install && npm start');
    expect(second).toBe('npm test');
  });

  it('is what .ci/run runs: the locked install, a type check, and exactly the test command', () => {
    expect(ciCommands()).toEqual(['npm ci --no-audit --no-fund', 'npm run typecheck', second]);
  });

  it('starts the gateway with npm start and prepares the machine in npm test', () => {
    // exec: the shell npm runs the script with becomes the gateway, so the signal npm passes on reaches it (test/gateway/lifecycle.test.ts).
    expect(pkg.scripts['start']).toBe('exec node bin/queen-gateway.js serve');
    expect(pkg.scripts['test']).toBe('bash scripts/test.sh');
    // The test command must end in the suite itself, with its arguments passed on.
    expect(readFileSync(`${ROOT}scripts/test.sh`, 'utf8')).toMatch(/\nexec node_modules\/\.bin\/vitest run "\$@"\n$/);
  });
});

describe('the README "Try it" block', () => {
  let gateway: ChildProcess;
  let bootstrap = '';
  let httpUrl = '';

  beforeAll(async () => {
    gateway = spawn(process.execPath, [`${ROOT}bin/queen-gateway.js`, 'serve', '--port', '0', '--http-port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      gateway.on('exit', (code) => reject(new Error(`the gateway exited with ${code}: ${out}`)));
      gateway.stdout!.on('data', (d: Buffer) => {
        out += d;
        const ready = out.split('\n').map((l) => (l.startsWith('{') ? (JSON.parse(l) as { bootstrap?: string; http?: string }) : {})).find((l) => l.bootstrap);
        if (ready) {
          bootstrap = ready.bootstrap!;
          httpUrl = ready.http!;
          resolve();
        }
      });
    });
  });

  afterAll(() => {
    gateway?.kill('SIGTERM');
  });

  it('writes with kcat, reads it back, pushes over HTTP and pops both', async () => {
    const lines = shellLines(section('### Try it'));
    expect(lines).toHaveLength(4);
    // The block names the default ports; this gateway listens on free ones.
    const outputs: string[] = [];
    for (const line of lines) {
      const command = line.replaceAll('127.0.0.1:9092', bootstrap).replaceAll('http://127.0.0.1:6632', httpUrl);
      const { stdout } = await run('bash', ['-c', command], { timeout: 20_000 });
      outputs.push(stdout);
    }
    expect(outputs[1]!.trim()).toBe('hello from kcat');
    expect(JSON.parse(outputs[2]!)).toMatchObject([{ status: 'queued', queue: 'greetings', partition: '0', offset: 1 }]);
    const popped = JSON.parse(outputs[3]!) as { messages: { offset: number; data: unknown }[] };
    expect(popped.messages.map((m) => [m.offset, m.data])).toEqual([
      [0, 'hello from kcat'],
      [1, { from: 'curl' }],
    ]);
  });

  it('runs the "From a program" kafkajs block, and kcat reads its record back', async () => {
    const block = section('### From a program').match(/```ts\n([\s\S]*?)```/)?.[1];
    expect(block, 'the section opens with a ts block').toBeDefined();
    expect(block).toContain("from 'kafkajs'");
    // The block stops at its send; disconnecting lets the process end.
    const program = `${block!.replaceAll('127.0.0.1:9092', bootstrap)}\nawait producer.disconnect();\n`;
    await run(process.execPath, ['--input-type=module', '-e', program], { cwd: ROOT, timeout: 30_000 });
    const { stdout } = await run('kcat', ['-C', '-b', bootstrap, '-t', 'greetings', '-o', '2', '-c', '1', '-e', '-q', '-f', '%k=%s\n'], { timeout: 20_000 });
    expect(stdout.trim()).toBe('k=hello from kafkajs');
  });
});
