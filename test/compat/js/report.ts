/**
 * What the JavaScript scenario programs share: the step reporter (one JSON
 * line per step on stdout) and the scenario's constants, the same in every
 * language's program.
 */
export const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type Codec = (typeof CODECS)[number];
/** Keyed records produced per codec, over PARTITIONS partitions. */
export const PER_CODEC = 10;
export const PARTITIONS = 2;

export function args(): { bootstrap: string; prefix: string } {
  const [bootstrap, prefix] = process.argv.slice(2);
  if (!bootstrap || !prefix) {
    console.error('usage: <program> BOOTSTRAP PREFIX');
    process.exit(2);
  }
  return { bootstrap, prefix };
}

function emit(step: string, status: 'pass' | 'fail' | 'unsupported', detail: string): void {
  process.stdout.write(JSON.stringify({ step, status, detail }) + '\n');
}

/** Runs one step: pass with what `body` returns, fail with what it threw. */
export async function step(name: string, body: () => Promise<string>): Promise<boolean> {
  try {
    emit(name, 'pass', await body());
    return true;
  } catch (e) {
    emit(name, 'fail', e instanceof Error ? e.message : String(e));
    return false;
  }
}

export function unsupported(name: string, why: string): void {
  emit(name, 'unsupported', why);
}

/** Polls `condition` every 100 ms until true, or throws naming `what` after `ms`. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`waited ${ms / 1000} s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}
