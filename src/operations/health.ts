import type { Core } from '../core/core.js';

/**
 * Whether the core answers: a listing of its queues within `timeoutMs`. A hung
 * database must not hang the probe, so the answer comes by the deadline either
 * way. Null when healthy, else the sentence (about `name`) saying why not.
 * The HTTP API's /ready (src/http/readiness.ts) and the operations listener's
 * /ready (src/cli/main.ts) both ask this.
 */
export async function coreProblem(core: Core, timeoutMs: number, name = 'The core'): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`it did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([core.listQueues(), deadline]);
    return null;
  } catch (e) {
    return `${name} does not answer: ${(e as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}
