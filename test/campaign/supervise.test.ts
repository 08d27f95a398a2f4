/**
 * `npm run campaign` exits with the verdict even when the campaign's process
 * cannot exit (./supervise.ts): a child that told its exit code and then
 * hangs is SIGKILLed after the grace, and the parent exits with the code.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const FIXTURE = fileURLToPath(new URL('./fixtures/stuck-after-verdict.ts', import.meta.url));

describe('the campaign supervisor', () => {
  it("exits with the child's verdict when the child hangs after it", async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(out.trim().split('\n').at(-1)).toBe('campaign: the last line');
    expect(err).toMatch(/had not exited 1 s after its verdict; SIGKILLed it/);
    expect(code).toBe(3);
  }, 120_000);
});
