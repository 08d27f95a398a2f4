import type { Core } from '../core/core.js';

/**
 * Whether the core answers: a listing of its queues within `timeoutMs`. A hung
 * database must not hang the probe, so the answer comes by the deadline either
 * way. Null when healthy, else the sentence saying why not. The HTTP API's
 * /health and the small operations listener (./endpoint.ts) both ask this.
 */
export async function coreProblem(core: Core, timeoutMs: number): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`it did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([core.listQueues(), deadline]);
    return null;
  } catch (e) {
    return `The core does not answer: ${(e as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}
