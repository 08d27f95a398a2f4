/**
 * Queen's native calls through the Core interface, for `npm run bench:core`:
 * push (1 and 100 items of a 200-byte JSON payload, each with its own
 * transactionId so the dedup lookup runs), pop then ack (batches of 10, each
 * message acked; preloaded in pushes of ten), and the native transaction that acks one popped message and
 * pushes its successor (consume-transform-produce). Messages per second,
 * from one caller and (push only) eight, and the CPU time this process
 * spent per message (for PostgreSQL, without the server's).
 */
import type { Core } from '../../src/core/core.js';

const PAYLOAD = { body: 'a'.repeat(190) };

export interface NativeEngine {
  name: string;
  open: () => Promise<Core>;
}

interface NativeCase {
  name: string;
  callers: number;
  /** Prepared messages in the queue before the clock starts. */
  preload: number;
  /** One step; answers the messages it handled. */
  step: (core: Core, queue: string, caller: number) => Promise<number>;
}

let sequence = 0;
const uniqueId = () => `t-${process.pid}-${++sequence}`;

async function push(core: Core, queue: string, count: number): Promise<number> {
  const items = Array.from({ length: count }, () => ({ queue, transactionId: uniqueId(), payload: PAYLOAD }));
  const { items: results } = await core.push({ items });
  if (results.some((r) => r.status !== 'queued')) throw new Error('a unique id answered duplicate');
  return count;
}

async function popAndAck(core: Core, queue: string): Promise<number> {
  const { messages } = await core.pop({ queue, consumerGroup: 'bench', owner: 'w', batch: 10, waitMs: 0 });
  for (const m of messages) {
    const { acked } = await core.ack({ queue, partition: m.partition, consumerGroup: 'bench', offset: m.offset, status: 'completed' });
    if (!acked) throw new Error(`offset ${m.offset} was not acked`);
  }
  return messages.length;
}

async function transform(core: Core, queue: string): Promise<number> {
  const { messages } = await core.pop({ queue, consumerGroup: 'bench', owner: 'w', batch: 1, waitMs: 0 });
  const m = messages[0];
  if (!m) return 0;
  const outcome = await core.transaction({
    operations: [
      { op: 'ack', queue, partition: m.partition, consumerGroup: 'bench', offset: m.offset, status: 'completed', required: true },
      { op: 'push', queue: `${queue}-out`, transactionId: uniqueId(), payload: PAYLOAD },
    ],
  });
  if (!outcome.success) throw new Error(outcome.message);
  return 1;
}

const CASES: NativeCase[] = [
  { name: 'push 1', callers: 1, preload: 0, step: (core, queue) => push(core, queue, 1) },
  { name: 'push 1', callers: 8, preload: 0, step: (core, queue) => push(core, queue, 1) },
  { name: 'push 100', callers: 1, preload: 0, step: (core, queue) => push(core, queue, 100) },
  { name: 'push 100', callers: 8, preload: 0, step: (core, queue) => push(core, queue, 100) },
  { name: 'pop 10+ack', callers: 1, preload: 5_000, step: popAndAck },
  { name: 'txn ack+push', callers: 1, preload: 2_000, step: transform },
];

/** Messages per second, and this process's CPU time per message (less swayed by a loaded machine than the rate). */
async function measure(engine: NativeEngine, c: NativeCase, seconds: number): Promise<{ rate: number; cpuMicros: number }> {
  const core = await engine.open();
  const queue = `native-${process.pid}-${Date.now().toString(36)}`;
  const config = { dedupWindowSeconds: 600, retentionMs: -1 };
  await core.createQueue({ name: queue, partitions: 1, partitionNames: ['Default'], config });
  await core.createQueue({ name: `${queue}-out`, partitions: 1, partitionNames: ['Default'], config });
  // In pushes of ten, so a pop decodes batches of ten, as from a steady producer.
  for (let loaded = 0; loaded < c.preload; loaded += 10) await push(core, queue, Math.min(10, c.preload - loaded));
  let handled = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: c.callers }, async (_, caller) => {
      while (performance.now() < deadline) {
        const n = await c.step(core, queue, caller);
        // Out of preloaded messages: the rate is what was handled over the time it took.
        if (n === 0) break;
        handled += n;
      }
    }),
  );
  const rate = handled / ((performance.now() - started) / 1000);
  const used = process.cpuUsage(cpu);
  const cpuMicros = (used.user + used.system) / handled;
  await core.deleteQueue({ name: queue });
  await core.deleteQueue({ name: `${queue}-out` });
  await core.close();
  return { rate, cpuMicros };
}

export async function benchNative(engines: NativeEngine[], seconds: number): Promise<void> {
  const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
  console.log(`\nnative calls, ${seconds}s per case, 200-byte JSON payloads, one partition, dedup window 600 s`);
  console.log(['engine', 'case', 'callers', 'messages/s', 'CPU µs/msg'].map((h) => h.padStart(14)).join(''));
  for (const engine of engines) {
    for (const c of CASES) {
      const { rate, cpuMicros } = await measure(engine, c, seconds);
      console.log([engine.name, c.name, String(c.callers), fmt(rate), fmt(cpuMicros)].map((s) => s.padStart(14)).join(''));
    }
  }
}
