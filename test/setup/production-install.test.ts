/**
 * A production install starts with `npm start`: `npm pack` builds and packs
 * the product, and the unpacked tarball, beside the production dependencies
 * alone (no tsx, no TypeScript), answers Kafka clients. Without a build it
 * says what to run instead of failing on a missing module.
 */
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
// Under the checkout, not /tmp: node_modules is copied as hard links, which need one file system.
mkdirSync(join(ROOT, '.tmp'), { recursive: true });
const work = mkdtempSync(join(ROOT, '.tmp', 'production-install-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A copy of the tracked files, as a clean clone has them, so the pack builds nothing of the checkout's own dist/. */
async function cleanCopy(): Promise<string> {
  const source = join(work, 'source');
  const { stdout } = await run('git', ['ls-files', '-z'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  for (const file of stdout.split('\0').filter((f) => f !== '' && existsSync(join(ROOT, f)))) {
    cpSync(join(ROOT, file), join(source, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(source, 'node_modules'), 'dir');
  return source;
}

function startAndWaitForReady(cwd: string): Promise<{ bootstrap: string; stop: () => Promise<void> }> {
  // A process group of its own: npm runs the script through a shell and does not pass SIGTERM on, so the group is signalled.
  const child = spawn('npm', ['start', '--', '--port', '0', '--no-http', '--log-level', 'info'], { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stderr.on('data', (d: Buffer) => (out += d));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`npm start exited with ${code}: ${out}`)));
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      const match = /"bootstrap":"([^"]+)"/.exec(out);
      if (match) {
        resolve({
          bootstrap: match[1]!,
          stop: () =>
            new Promise((done) => {
              child.removeAllListeners('exit');
              child.on('exit', () => done());
              process.kill(-child.pid!, 'SIGTERM');
            }),
        });
      }
    });
  });
}

describe('a production install', () => {
  it('packs bin/ and dist/, runs from dist/ without dev dependencies, and serves a Kafka client', async () => {
    const source = await cleanCopy();
    const packed = join(work, 'packed');
    mkdirSync(packed);
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', packed], { cwd: source, maxBuffer: 64 * 1024 * 1024 });
    const [manifest] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    const files = manifest!.files.map((f) => f.path);
    expect(files).toContain('bin/queen-gateway.js');
    expect(files).toContain('dist/src/cli/main.js');
    expect(files.some((f) => f.startsWith('dist/src/core/engines/postgres/migrations/'))).toBe(true);
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('dist/test/'))).toEqual([]);

    const installed = join(work, 'installed');
    mkdirSync(installed);
    await run('tar', ['-xzf', join(packed, manifest!.filename), '-C', installed, '--strip-components=1']);
    // The production dependencies as `npm ci --omit=dev` lays them out: the checkout's tree, pruned by the lock file.
    await run('cp', ['-al', join(ROOT, 'node_modules'), join(installed, 'node_modules')]);
    cpSync(join(ROOT, 'package-lock.json'), join(installed, 'package-lock.json'));
    await run('npm', ['prune', '--omit=dev', '--offline', '--no-audit', '--no-fund'], { cwd: installed });
    expect(readdirSync(join(installed, 'node_modules'))).not.toContain('tsx');
    expect(existsSync(join(installed, 'node_modules', 'typescript'))).toBe(false);

    const gateway = await startAndWaitForReady(installed);
    try {
      const kafka = new Kafka({ brokers: [gateway.bootstrap], clientId: 'production-install', logLevel: logLevel.NOTHING });
      const producer = kafka.producer({ allowAutoTopicCreation: true });
      await producer.connect();
      const [written] = await producer.send({ topic: 'installed', messages: [{ value: 'from a packed build' }] });
      await producer.disconnect();
      expect(written).toMatchObject({ topicName: 'installed', errorCode: 0, baseOffset: '0' });
    } finally {
      await gateway.stop();
    }

    // The same tree without its build says what to do.
    rmSync(join(installed, 'dist'), { recursive: true });
    const bare = await run(process.execPath, [join(installed, 'bin/queen-gateway.js'), '--version']).catch((e: { code: number; stderr: string }) => e);
    expect(bare).toMatchObject({ code: 2 });
    expect((bare as { stderr: string }).stderr).toMatch(/queen-gateway is not built .* run "npm install" .* "npm ci && npm run build && npm prune --omit=dev"/);
  }, 240_000);
});
