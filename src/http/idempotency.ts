import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Core, TransactionOperation, TransactionResult } from '../core/core.js';
import { HttpError } from './errors.js';

/**
 * Idempotency-Key on every mutating request (POST, PUT, DELETE), as the
 * seed's retry contract asks: the first request under a key runs and its
 * answer is recorded; a repeat with the same method, path and body answers
 * that first answer again with `Idempotency-Replayed: true` and does nothing;
 * the same key with a different request answers 409, since silently taking
 * the new body would drop the change.
 *
 * The ledger is the core's KV store (namespace `http.idempotency`, entries
 * kept 24 h), so every gateway in front of the core shares it. A key is
 * claimed (putIfAbsent) before the request runs and answered after it; a
 * repeat that finds a claim without an answer learns the outcome is unknown
 * (the first request is still running, or the gateway stopped while running
 * it): 409 `outcome_unknown`, never a second run. Routes whose effect is
 * one core transaction (transaction, ack, push, the KV routes) also write a
 * marker in that transaction (idempotencyMarker), so a repeat of one whose
 * answer was lost learns it took effect: 409 `outcome_applied`. A route whose
 * effect is a series of core transactions (ack batch) records the answers of
 * the steps so far in each step's transaction (progressMarker), so a repeat
 * resumes after them and answers the whole request. Routes whose
 * effect the core cannot put in a transaction (configure, queue delete) are
 * idempotent in themselves and say so with IDEMPOTENT_EFFECT: a repeat that
 * finds a claim without an answer runs them again. When the core provably
 * never received the request (503 `core_unavailable`), the claim is dropped
 * so the same key can be sent again.
 */

const LEDGER_NAMESPACE = 'http.idempotency';
const LEDGER_TTL_MS = 24 * 3600 * 1000;
const MUTATING = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);
const KEY = /^[\x20-\x7e]{1,255}$/;

interface LedgerEntry {
  fingerprint: string;
  claimedAt: number;
  /** Written in the effect's own core transaction, where the route has one. */
  applied?: boolean;
  /** What a route wrote down before its effect, for a repeat that runs it again (noteBeforeEffect). */
  note?: unknown;
  /**
   * For a route whose effect is a series of core transactions (an ack batch):
   * the answers of the steps that have run, written in the transaction of the
   * latest step, so a repeat resumes after them (progressMarker).
   */
  progress?: unknown[];
  answer?: { status: number; body: string };
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64url');

/** The key a request carries, for error answers that tell the caller what to retry with. */
export function idempotencyKeyOf(request: FastifyRequest): string | null {
  const key = request.headers['idempotency-key'];
  return typeof key === 'string' ? key : null;
}

const claimed = new WeakMap<FastifyRequest, { slot: string; fingerprint: string; claimedAt: number; firstNote?: unknown; firstProgress?: unknown[] }>();

/**
 * For a route with IDEMPOTENT_EFFECT: writes into the key's claim what the
 * effect is about to act on, so a repeat that runs it again acts on the same
 * thing (noteOfFirstAttempt). Nothing without a key.
 */
export async function noteBeforeEffect(core: Core, request: FastifyRequest, note: unknown): Promise<void> {
  const mine = claimed.get(request);
  if (!mine) return;
  await core.kvPut({ ns: LEDGER_NAMESPACE, key: mine.slot, value: { fingerprint: mine.fingerprint, claimedAt: mine.claimedAt, note } satisfies LedgerEntry, lifetime: { ttlMs: LEDGER_TTL_MS } });
}

/** In a repeat running an unanswered key again: what the first attempt noted before its effect, if it got that far. */
export function noteOfFirstAttempt(request: FastifyRequest): unknown {
  return claimed.get(request)?.firstNote;
}

/**
 * For a route whose effect is a series of core transactions: the ledger write
 * that goes into a step's transaction, recording the answers of every step up
 * to and including it (`answers`), so a repeat of a request that stopped part
 * way resumes after them and answers them as they were (progressOfFirstAttempt).
 * Null when the request claimed no key.
 */
export function progressMarker(request: FastifyRequest, answers: readonly unknown[]): TransactionOperation | null {
  const mine = claimed.get(request);
  if (!mine) return null;
  const value: LedgerEntry = { fingerprint: mine.fingerprint, claimedAt: mine.claimedAt, progress: [...answers] };
  return { op: 'kv.put', ns: LEDGER_NAMESPACE, key: mine.slot, value, lifetime: { ttlMs: LEDGER_TTL_MS } };
}

/** In a repeat of a request that stopped part way: the answers of the steps its first attempt completed (none when it completed none). */
export function progressOfFirstAttempt(request: FastifyRequest): readonly unknown[] {
  return claimed.get(request)?.firstProgress ?? [];
}

/** The ledger write a route adds to the core transaction that is its effect; null when the request claimed no key. */
export function idempotencyMarker(request: FastifyRequest): TransactionOperation | null {
  const mine = claimed.get(request);
  if (!mine) return null;
  const value: LedgerEntry = { fingerprint: mine.fingerprint, claimedAt: mine.claimedAt, applied: true };
  return { op: 'kv.put', ns: LEDGER_NAMESPACE, key: mine.slot, value, lifetime: { ttlMs: LEDGER_TTL_MS } };
}

/**
 * Route config of a route whose effect is the same however often it runs
 * (configure: create-if-absent and set; delete: a missing queue is deleted
 * already), so a repeat of an unanswered key may run it again.
 */
export const IDEMPOTENT_EFFECT = { idempotentEffect: true } as const;

/**
 * Runs a route's effect as one core transaction carrying the key's ledger
 * entry when the request claimed a key, or as the plain core call when it did
 * not (one round trip either way). `effect` is the operations of the effect.
 */
export async function withLedger<T>(core: Core, request: FastifyRequest, effect: TransactionOperation[], plain: () => Promise<T>, read: (outcome: TransactionResult) => T): Promise<T> {
  const marker = idempotencyMarker(request);
  if (!marker) return plain();
  return read(await core.transaction({ operations: [...effect, marker] }));
}

export function installIdempotency(app: FastifyInstance, core: Core): void {
  // After validation: a request its schema refuses never claims a key.
  app.addHook('preHandler', async (request, reply) => {
    if (!MUTATING.has(request.method) || request.headers['idempotency-key'] === undefined) return;
    const key = idempotencyKeyOf(request);
    if (key === null || !KEY.test(key)) {
      throw new HttpError(400, 'invalid_request', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters, sent once; derive it from the work (order-1042-shipping-label), not from the attempt.');
    }
    const fingerprint = digest(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`);
    const slot = digest(key);
    const claimedAt = Date.now();
    const claim = await core.kvPutIfAbsent({ ns: LEDGER_NAMESPACE, key: slot, value: { fingerprint, claimedAt } satisfies LedgerEntry, lifetime: { ttlMs: LEDGER_TTL_MS } });
    if (claim.applied) {
      claimed.set(request, { slot, fingerprint, claimedAt });
      return;
    }
    const entry = claim.entry!.value as LedgerEntry;
    if (entry.fingerprint !== fingerprint) {
      throw new HttpError(409, 'idempotency_key_reused', `The Idempotency-Key ${JSON.stringify(key)} was first sent with a different request (method, path or body); a key names one effect. If the request changed on purpose, send it under a new key.`);
    }
    if (!entry.answer && entry.applied) {
      throw new HttpError(409, 'outcome_applied', `A request with the Idempotency-Key ${JSON.stringify(key)} took effect (it arrived at ${new Date(entry.claimedAt).toISOString()}), but its answer was lost before it was recorded. Do not send it again; read its effect instead.`);
    }
    if (!entry.answer && entry.progress) {
      // A series of steps stopped part way (or its answer was lost after the last): resume after the steps recorded.
      claimed.set(request, { slot, fingerprint, claimedAt: entry.claimedAt, firstProgress: entry.progress });
      return;
    }
    if (!entry.answer && (request.routeOptions.config as { idempotentEffect?: boolean }).idempotentEffect) {
      // The effect is the same however often it runs: running it again is the answer.
      claimed.set(request, { slot, fingerprint, claimedAt: entry.claimedAt, ...(entry.note === undefined ? {} : { firstNote: entry.note }) });
      return;
    }
    if (!entry.answer) {
      throw new HttpError(409, 'outcome_unknown', `A request with the Idempotency-Key ${JSON.stringify(key)} arrived at ${new Date(entry.claimedAt).toISOString()} and has no recorded answer: it is still running, or the gateway stopped while running it, so it may have taken effect. Check its effect before sending it again under a new key.`);
    }
    return reply.status(entry.answer.status).header('idempotency-replayed', 'true').type('application/json; charset=utf-8').send(entry.answer.body);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const mine = claimed.get(request);
    if (!mine) return payload;
    claimed.delete(request);
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    if (reply.statusCode === 503 && body?.includes('"core_unavailable"')) {
      // The core never got the request: nothing happened, and the same key may run it.
      await core.kvDelete({ ns: LEDGER_NAMESPACE, key: mine.slot }).catch(() => {});
    } else if (reply.statusCode < 500 && body !== null) {
      // Should the core be gone by now, the claim stays unanswered: a repeat learns the outcome is unknown.
      await core.kvPut({ ns: LEDGER_NAMESPACE, key: mine.slot, value: { fingerprint: mine.fingerprint, claimedAt: mine.claimedAt, answer: { status: reply.statusCode, body } } satisfies LedgerEntry, lifetime: { ttlMs: LEDGER_TTL_MS } }).catch((e: unknown) => request.log.warn({ err: e }, 'could not record the answer to an Idempotency-Key'));
    }
    // Any other failure may have taken effect: the claim stays, so a repeat learns the outcome is unknown.
    return payload;
  });
}
