/**
 * The benchmark's child processes: started with a deadline, read as JSON
 * lines, measured from outside through /proc, and all killed when the run
 * ends however it ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLOCK_TICKS_PER_SECOND = 100;

const living = new Set<ChildProcess>();

/** Kills every child still running (SIGKILL: the run is over or aborted). */
export function killAll(): void {
  for (const child of living) child.kill('SIGKILL');
  living.clear();
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAll();
    process.exit(130);
  });
}
process.on('exit', killAll);

export interface Child {
  pid: number;
  /** Resolves with the first line for which `pick` returns a value. */
  waitFor<T>(pick: (message: Record<string, any>) => T | undefined, what: string, timeoutMs: number): Promise<T>;
  /** Resolves when the process exits; rejects on a non-zero code or the deadline, with its stderr. */
  exited: Promise<void>;
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  /** The process is killed after this long whatever it is doing. */
  timeoutMs: number;
  onMessage?: (message: Record<string, any>) => void;
  label: string;
  /** Added to this process's environment. */
  env?: Record<string, string>;
}

/** A TypeScript file of this folder run through tsx. */
export function spawnScript(file: string, args: string[], options: SpawnOptions): Child {
  return spawnProcess(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(file, import.meta.url)), ...args], options);
}

export function spawnProcess(command: string, args: string[], options: SpawnOptions): Child {
  const child = spawn(command, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: options.env ? { ...process.env, ...options.env } : process.env });
  living.add(child);
  const listeners = new Set<(message: Record<string, any>) => void>();
  let stderr = '';
  let buffered = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (!line.startsWith('{')) continue;
      let message: Record<string, any>;
      try {
        message = JSON.parse(line) as Record<string, any>;
      } catch {
        continue;
      }
      options.onMessage?.(message);
      for (const listener of listeners) listener(message);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  const exited = new Promise<void>((resolve, reject) => {
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      living.delete(child);
      if (code === 0 || signal === 'SIGTERM') resolve();
      else reject(new Error(`${options.label} exited with ${code ?? signal}${stderr ? `: ${stderr.trim().split('\n').slice(-5).join(' | ')}` : ''}`));
    });
  });
  exited.catch(() => {});
  return {
    pid: child.pid!,
    exited,
    waitFor(pick, what, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`${options.label}: no ${what} within ${timeoutMs} ms${stderr ? `; stderr: ${stderr.trim().slice(-500)}` : ''}`)), timeoutMs);
        const listener = (message: Record<string, any>) => {
          const value = pick(message);
          if (value !== undefined) done(null, value);
        };
        const done = (err: Error | null, value?: any) => {
          clearTimeout(timer);
          listeners.delete(listener);
          if (err) reject(err);
          else resolve(value);
        };
        listeners.add(listener);
        exited.then(
          () => done(new Error(`${options.label} exited before its ${what}`)),
          (e: Error) => done(e),
        );
      });
    },
    signal(signal) {
      child.kill(signal);
    },
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited.catch(() => {});
      clearTimeout(timer);
    },
  };
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields overall.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** The process's peak resident set (VmHWM) in MB. */
export function peakMemoryMB(pid: number): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN; // the process has gone
  }
}

/** The memory the process holds now (VmRSS) in MB. */
export function residentMB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN; // the process has gone
  }
}

/** Runs `work` and reports how many cores the process used meanwhile. */
export async function withCpu<T>(pid: number, work: () => Promise<T>): Promise<{ value: T; cpuSeconds: number; cores: number }> {
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  const value = await work();
  const used = cpuSeconds(pid) - cpu0;
  return { value, cpuSeconds: used, cores: used / ((performance.now() - t0) / 1000) };
}
