import { totalmem } from 'node:os';

/**
 * A quarter of the machine's memory: the engine keeps every record in the
 * process's memory, and Node, the gateway's buffers and the rest of the
 * machine need the other three quarters. Measured: 2.5 GB stored is 2.7 GB
 * RSS, so the limit is close to what the process grows by.
 */
export function defaultMemoryLimitBytes(): number {
  return Math.floor(totalmem() / 4);
}
