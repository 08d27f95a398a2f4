/**
 * KV and once, outside transactions. A key is one path segment: clients
 * URL-encode it (a "/" in a key travels as %2F). Lifetimes are `ttl`
 * ('7d', '30m', '90s', or seconds) or `forever: true`; a write without
 * either lives forever.
 *
 *   GET    /api/v1/kv/:ns?prefix=&limit=     live entries, by key
 *   GET    /api/v1/kv/:ns/:key               the entry, or 404
 *   PUT    /api/v1/kv/:ns/:key               { value, ttl|forever, expectedVersion? } → { applied, entry }
 *   POST   /api/v1/kv/:ns/:key/put-if-absent { value, ttl|forever } → { applied, entry }
 *   DELETE /api/v1/kv/:ns/:key               → { deleted }
 *   POST   /api/v1/kv/:ns/:key/incr          { by?, ttl|forever } → { entry }
 *   POST   /api/v1/kv/:ns/:key/once          { ttl|forever } → { won }
 *
 * With an Idempotency-Key, each write is a core transaction that also writes
 * the key's ledger entry (../idempotency.ts), so a retry after a lost answer
 * can never apply it twice (an incr counting twice).
 */
import type { FastifyRequest } from 'fastify';
import type { Core, KvEntry, KvPutResult, TransactionResult } from '../../core/core.js';
import { kvEntryAnswer } from '../answers.js';
import type { HttpApiContext } from '../context.js';
import { HttpError } from '../errors.js';
import { lifetimeOf, requiredLifetimeOf, type LifetimeFields } from '../lifetimes.js';
import { withLedger } from '../idempotency.js';
import { KV_PATH, LIFETIME_PROPERTIES, NAME } from '../schemas.js';

type KvParams = { ns: string; key: string };
type KvRequest<Body> = FastifyRequest<{ Params: KvParams; Body: Body }>;
type PutBody = { value: unknown; expectedVersion?: number } & LifetimeFields;
type PutIfAbsentBody = { value: unknown } & LifetimeFields;
type IncrBody = { by?: number } & LifetimeFields;

/**
 * The one KV operation's result. With an Idempotency-Key the write runs as a
 * core transaction beside the key's ledger entry; none of these operations is
 * required, so the transaction commits.
 */
function only<T>(outcome: TransactionResult): T {
  if (!outcome.success) throw new Error(`A KV transaction without a precondition rolled back: ${outcome.message}`);
  return outcome.results[0] as T;
}

const closed = (required: string[], properties: Record<string, unknown>) => ({ type: 'object', required, additionalProperties: false, properties });

const LIST_SCHEMA = {
  params: { type: 'object', required: ['ns'], properties: { ns: NAME } },
  querystring: closed([], { prefix: { type: 'string', default: '' }, limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 1000 } }),
};
const PUT_BODY = closed(['value'], { value: {}, expectedVersion: { type: 'integer', minimum: 0 }, ...LIFETIME_PROPERTIES });
const PUT_IF_ABSENT_BODY = closed(['value'], { value: {}, ...LIFETIME_PROPERTIES });
const INCR_BODY = closed([], { by: { type: 'number' }, ...LIFETIME_PROPERTIES });
const ONCE_BODY = closed([], LIFETIME_PROPERTIES);

export function registerKvRoutes({ app, core }: HttpApiContext): void {
  app.get<{ Params: { ns: string }; Querystring: { prefix: string; limit: number } }>('/api/v1/kv/:ns', { schema: LIST_SCHEMA }, async (request) =>
    listEntries(core, request.params.ns, request.query),
  );
  app.get<{ Params: KvParams }>('/api/v1/kv/:ns/:key', { schema: { params: KV_PATH } }, async (request) => getEntry(core, request.params));
  app.put<{ Params: KvParams; Body: PutBody }>('/api/v1/kv/:ns/:key', { schema: { params: KV_PATH, body: PUT_BODY } }, async (request) => putEntry(core, request));
  app.post<{ Params: KvParams; Body: PutIfAbsentBody }>('/api/v1/kv/:ns/:key/put-if-absent', { schema: { params: KV_PATH, body: PUT_IF_ABSENT_BODY } }, async (request) =>
    putIfAbsent(core, request),
  );
  app.delete<{ Params: KvParams }>('/api/v1/kv/:ns/:key', { schema: { params: KV_PATH } }, async (request) => deleteEntry(core, request));
  app.post<{ Params: KvParams; Body: IncrBody }>('/api/v1/kv/:ns/:key/incr', { schema: { params: KV_PATH, body: INCR_BODY } }, async (request) => increment(core, request));
  app.post<{ Params: KvParams; Body: LifetimeFields }>('/api/v1/kv/:ns/:key/once', { schema: { params: KV_PATH, body: ONCE_BODY } }, async (request) => once(core, request));
}

async function listEntries(core: Core, ns: string, query: { prefix: string; limit: number }) {
  const entries = await core.kvGetPrefix({ ns, prefix: query.prefix, limit: query.limit });
  return { entries: entries.map(kvEntryAnswer) };
}

async function getEntry(core: Core, { ns, key }: KvParams) {
  const entry = await core.kvGet({ ns, key });
  if (!entry) throw new HttpError(404, 'not_found', `KV namespace "${ns}" has no live key ${JSON.stringify(key)}: it was never written, was deleted, or expired.`);
  return kvEntryAnswer(entry);
}

const putAnswer = (put: KvPutResult) => ({ applied: put.applied, entry: put.entry ? kvEntryAnswer(put.entry) : null });

async function putEntry(core: Core, request: KvRequest<PutBody>) {
  const { ns, key } = request.params;
  const lifetime = lifetimeOf(request.body, 'body');
  const write = {
    ns, key, value: request.body.value,
    ...(lifetime ? { lifetime } : {}),
    ...(request.body.expectedVersion === undefined ? {} : { expectedVersion: request.body.expectedVersion }),
  };
  return putAnswer(await withLedger(core, request, [{ op: 'kv.put', ...write }], () => core.kvPut(write), only<KvPutResult>));
}

async function putIfAbsent(core: Core, request: KvRequest<PutIfAbsentBody>) {
  const { ns, key } = request.params;
  const lifetime = lifetimeOf(request.body, 'body');
  const write = { ns, key, value: request.body.value, ...(lifetime ? { lifetime } : {}) };
  return putAnswer(await withLedger(core, request, [{ op: 'kv.putIfAbsent', ...write }], () => core.kvPutIfAbsent(write), only<KvPutResult>));
}

function deleteEntry(core: Core, request: FastifyRequest<{ Params: KvParams }>) {
  return withLedger(core, request, [{ op: 'kv.delete', ...request.params }], () => core.kvDelete(request.params), only<{ deleted: boolean }>);
}

async function increment(core: Core, request: KvRequest<IncrBody>) {
  const body = request.body ?? {};
  const lifetime = lifetimeOf(body, 'body');
  const incr = { ...request.params, by: body.by ?? 1, ...(lifetime ? { lifetime } : {}) };
  const entry = await withLedger(core, request, [{ op: 'kv.incr', ...incr }], () => core.kvIncr(incr), only<KvEntry>);
  return { entry: kvEntryAnswer(entry) };
}

function once(core: Core, request: KvRequest<LifetimeFields>) {
  const gate = { ...request.params, lifetime: requiredLifetimeOf(request.body, 'body') };
  // A lost gate rolls the transaction back, key's entry included: the answer, recorded after, says so.
  return withLedger(core, request, [{ op: 'once', ...gate }], () => core.once(gate), (outcome) => (outcome.success ? (outcome.results[0] as { won: boolean }) : { won: false }));
}
