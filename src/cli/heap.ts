/**
 * The garbage collector's pace for a process whose data lives outside the
 * JavaScript heap. Every record a client produces arrives in Buffers (the
 * socket's 64 KiB read chunks, then the frame they are copied into) whose
 * bytes V8 counts as external memory allocated since its last full
 * collection; it adds them to the old generation's size when it decides
 * whether to start marking, against a limit it sets from the heap's own live
 * size (about 18 MB here) times a growing factor it picks (about 1.5). With
 * so little room, a full mark-compact ran for every 10 to 20 MB produced
 * (12 in 132,000 records of 1 KiB), each reclaiming almost nothing: the
 * largest single item in the gateway's CPU profile (a quarter of its busy
 * time, docs/bench/README.md). A fixed growing factor of 4 gives the old
 * generation room for the traffic between collections (2 in 71,000 records).
 *
 * V8 reads this flag each time it recomputes its limits, so setting it at
 * start works (unlike the heap sizes, fixed when the process starts). A
 * `--heap-growing-percent` given to node by the operator (on its command line
 * or in NODE_OPTIONS) is left alone.
 */
import { setFlagsFromString } from 'node:v8';

/** The old generation may grow to (1 + this/100) times its live size before the next full collection. */
export const HEAP_GROWING_PERCENT = 300;

export function paceGarbageCollection(execArgv: readonly string[] = process.execArgv, nodeOptions: string = process.env['NODE_OPTIONS'] ?? ''): void {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)];
  if (given.some((flag) => flag.startsWith('--heap-growing-percent') || flag.startsWith('--heap_growing_percent'))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
