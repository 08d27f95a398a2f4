/**
 * The campaign's writers over Queen's HTTP API, through every gateway that
 * serves it in turn:
 *
 * - pushes of one keyed message each (or `perPush` in one request, keys in
 *   turn), under an Idempotency-Key of their own;
 *   an answer other than 201 (a 503 while a core is away, a reset, a
 *   timeout) is retried with the same key on the next gateway, for up to
 *   60 s. 201 is an acknowledgement, and so is 409 outcome_applied (the
 *   first attempt took effect, its answer was lost); any other push is
 *   uncertain;
 * - `once` markers (POST /api/v1/kv/:ns/:key/once): two callers race for
 *   each key, each retrying under its own Idempotency-Key, and keep the last
 *   answer they got: at most one may be told it won.
 */
import { sleep } from '../support/eventually.js';
import { campaignValue, type CampaignHistory, type OnceHistory } from './history.js';

export interface HttpWriterOptions {
  /** The HTTP API of each gateway, "http://127.0.0.1:port"; those not running answer connection errors. */
  urls: () => string[];
  queue: string;
  partitions: number;
  records: number;
  keys: number;
  /** Messages in one push (one request under one Idempotency-Key, acknowledged together); 1 unless given. */
  perPush?: number;
  /** Names this lane's keys (several lanes push at once, each its own keys). */
  keyPrefix: string;
  stopped(): boolean;
  history: CampaignHistory;
  onError(line: string): void;
}

const RETRY_FOR_MS = 60_000;

async function call(url: string, body: object, key: string): Promise<{ status: number; json: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, json };
}

/** Tries `request` on each gateway in turn until `accept` takes an answer or the time is up; the accepted answer or null. */
async function retried<T>(o: Pick<HttpWriterOptions, 'urls' | 'onError'>, turn: number, what: string, request: (base: string) => Promise<{ status: number; json: unknown }>, accept: (a: { status: number; json: unknown }) => T | null): Promise<T | null> {
  const deadline = Date.now() + RETRY_FOR_MS;
  let last = '';
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const urls = o.urls();
    const base = urls[(turn + attempt) % urls.length]!;
    try {
      const answer = await request(base);
      const taken = accept(answer);
      if (taken !== null) return taken;
      last = `${answer.status} ${JSON.stringify(answer.json).slice(0, 200)}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await sleep(Math.min(1_000, 50 * 2 ** attempt));
  }
  o.onError(`${what}: no answer taken in ${RETRY_FOR_MS} ms; last ${last}`);
  return null;
}

export async function configureQueue(o: HttpWriterOptions): Promise<void> {
  const done = await retried(o, 0, `configuring queue ${o.queue}`, (base) => call(`${base}/api/v1/configure`, { queue: o.queue, partitions: o.partitions }, `configure-${o.queue}`), (a) => (a.status < 300 ? true : null));
  if (!done) throw new Error(`queue ${o.queue} could not be configured over HTTP`);
}

export async function runHttpPushes(o: HttpWriterOptions): Promise<void> {
  const next = new Map<string, number>();
  const perPush = Math.max(1, o.perPush ?? 1);
  for (let i = 0; i < o.records && !o.stopped(); i += perPush) {
    const items: { queue: string; partition: string; payload: string }[] = [];
    for (let j = i; j < Math.min(o.records, i + perPush); j++) {
      const index = j % o.keys;
      const key = `${o.keyPrefix}${index}`;
      const seq = next.get(key) ?? 0;
      next.set(key, seq + 1);
      items.push({ queue: o.queue, partition: String(index % o.partitions), payload: campaignValue('http', key, seq) });
    }
    const first = items[0]!.payload;
    // 409 outcome_applied: the first attempt took effect and only its answer was lost; that is an acknowledgement too.
    const stored = await retried(o, i, `push ${first}${items.length > 1 ? ` and ${items.length - 1} more` : ''}`, (base) => call(`${base}/api/v1/push`, { items }, `push-${o.queue}-${first}`), (a) => (a.status === 201 || (a.status === 409 && (a.json as { code?: string })?.code === 'outcome_applied') ? true : null));
    for (const item of items) o.history.writes.push({ topic: o.queue, value: item.payload, outcome: stored ? 'acknowledged' : 'uncertain' });
  }
}

/** Two callers per key, in parallel, `keys` keys one after another. */
export async function runOnceMarkers(o: Pick<HttpWriterOptions, 'urls' | 'stopped' | 'history' | 'onError'>, namespace: string, keys: number): Promise<void> {
  for (let k = 0; k < keys && !o.stopped(); k++) {
    const entry: OnceHistory = { key: `${namespace}/o${k}`, attempts: [] };
    o.history.once.push(entry);
    await Promise.all(
      ['x', 'y'].map(async (caller, turn) => {
        const won = await retried(o, k + turn, `once ${entry.key} by ${caller}`, (base) => call(`${base}/api/v1/kv/${namespace}/o${k}/once`, { ttl: '1h' }, `once-${namespace}-o${k}-${caller}`), (a) => {
          const answer = a.json as { won?: unknown };
          return a.status < 300 && typeof answer?.won === 'boolean' ? answer.won : null;
        });
        entry.attempts.push({ caller, outcome: won === null ? 'unknown' : won ? 'won' : 'lost' });
      }),
    );
  }
}
