/**
 * Queen's pop over many one-message partitions through the HTTP API, as
 * Queen's suite test testCgBootstrapNew does it: one message pushed to each
 * of `partitions` partitions (fifty pushes in flight), then `poppers`
 * workers pop one message at a time (wait=false) and ack it until a pop
 * comes back empty, first in queue mode, then as a consumer group. Answers
 * what each worker got, so a caller checks every message came exactly once,
 * and how long each phase took.
 */
import { QueenClient } from '../../src/client/index.js';

export interface ManyPartitionsRun {
  pushMs: number;
  /** Per pass (queue mode, then the group): the payload ids delivered and the time it took. */
  passes: { group: string | undefined; delivered: number[]; drainMs: number }[];
}

const PUSHES_IN_FLIGHT = 50;

export async function runManyPartitions(url: string, queue: string, partitions: number, poppers: number, groups: (string | undefined)[] = [undefined, 'many-cg']): Promise<ManyPartitionsRun> {
  const client = new QueenClient(url);
  const started = performance.now();
  for (let i = 0; i < partitions; i += PUSHES_IN_FLIGHT) {
    const ids = Array.from({ length: Math.min(PUSHES_IN_FLIGHT, partitions - i) }, (_, k) => i + k);
    await Promise.all(ids.map((id) => client.queue(queue).partition(`p-${id}`).push([{ data: { id } }])));
  }
  const pushMs = performance.now() - started;
  const passes: ManyPartitionsRun['passes'] = [];
  for (const group of groups) {
    const begun = performance.now();
    const delivered: number[] = [];
    await Promise.all(Array.from({ length: poppers }, () => drain(client, queue, group, delivered)));
    passes.push({ group, delivered, drainMs: performance.now() - begun });
  }
  return { pushMs, passes };
}

/** One worker: pop one, ack it, until a pop answers nothing. */
async function drain(client: QueenClient, queue: string, group: string | undefined, delivered: number[]): Promise<void> {
  for (;;) {
    const messages = await client.queue(queue).pop({ ...(group === undefined ? {} : { consumerGroup: group }), batch: 1 });
    if (messages.length === 0) return;
    for (const m of messages) {
      delivered.push((m.data as { id: number }).id);
      const { acked } = await client.ack(m, 'completed', group === undefined ? {} : { consumerGroup: group });
      if (!acked) throw new Error(`message ${m.queue}/${m.partition}@${m.offset} was not acked`);
    }
  }
}
