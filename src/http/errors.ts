import type { FastifyError, FastifyInstance } from 'fastify';
import { isCoreError, type CoreErrorCode } from '../core/errors.js';
import { isRpcError } from '../rpc/errors.js';

/**
 * The HTTP API's one catalogue of failures. Every error answer has the same
 * shape, `{ statusCode, code, message }`, where `code` is stable (a CoreError
 * code, or one of the HTTP-level codes below) and `message` is a sentence
 * that says what was wrong and what to do. A 4xx means nothing was written.
 */

export type HttpErrorCode =
  | CoreErrorCode
  | 'invalid_request'   // the body, query or path breaks the route's schema
  | 'invalid_json'
  | 'body_too_large'
  | 'unsupported_media_type'
  | 'not_found'
  | 'not_supported'   // a Queen feature this gateway does not build (501)
  | 'core_unavailable'   // the core provably never got the request (503, Retry-After): safe to retry
  | 'outcome_unknown'    // the request reached the core and no answer came back (504): it may have taken effect
  | 'idempotency_key_reused'
  | 'outcome_applied'    // a repeat of a keyed request that took effect and lost its answer
  | 'overloaded'         // the API is at its bound of requests in progress (429, Retry-After): nothing was done
  | 'unauthenticated'    // no or wrong credentials (401, WWW-Authenticate), ./access.ts
  | 'forbidden'          // the credentials' principal lacks an ACL (403), ./access.ts
  | 'group_not_empty'    // the console's offset reset of a consumer group that has members (409), as Kafka refuses it
  | 'internal';

/** What each core error means over HTTP. */
export const CORE_ERROR_STATUS: Readonly<Record<CoreErrorCode, number>> = Object.freeze({
  invalid_name: 400,
  invalid_argument: 400,
  invalid_config: 400,
  transaction_id_too_long: 400,
  unknown_queue: 404,
  unknown_partition: 404,
  queue_exists: 409,
  unknown_lease: 409,
  not_supported: 501,
  corrupt_batch: 500,
  closed: 503,
  unavailable: 503,
  storage_full: 507,
  // Kafka transactions' refusals; the HTTP API makes no Kafka transactional call.
  producer_fenced: 409,
  invalid_producer_id_mapping: 409,
  invalid_txn_state: 409,
  invalid_transaction_timeout: 400,
  // Coordinator leases concern Kafka groups and transactional ids only; another core node holds this one.
  not_coordinator: 503,
});

/** Seconds a client should wait before retrying a 503: long enough for a database restart to be noticed. */
export const RETRY_AFTER_SECONDS = 2;

export interface ErrorAnswer {
  statusCode: number;
  code: HttpErrorCode;
  message: string;
  /** The same sentence under the name Queen's clients read it by. */
  error: string;
  /** Sent as Retry-After (seconds) when retrying later is the advice. */
  retryAfterSeconds?: number;
}

/** A failure a route raises itself (a missing KV entry, an unknown queue in a listing). */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly statusCode: number,
    readonly code: HttpErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Ajv's error objects, as much of them as the sentences need. */
interface SchemaProblem {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** "/items/0/queue" under "body" reads as body.items[0].queue. */
function fieldName(part: string, instancePath: string): string {
  const steps = instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return steps.reduce((name, step) => (/^\d+$/.test(step) ? `${name}[${step}]` : `${name}.${step}`), part);
}

/** One sentence for the first schema violation (the others usually follow from it). */
export function describeSchemaProblem(problems: readonly SchemaProblem[], part: string): string {
  // An anyOf/oneOf failure is reported after the branch errors; the branch errors say more.
  const problem = problems.find((p) => p.keyword !== 'anyOf' && p.keyword !== 'oneOf') ?? problems[0];
  if (!problem) return `The request ${part} is not valid.`;
  const field = fieldName(part, problem.instancePath);
  switch (problem.keyword) {
    case 'required':
      return `${field} is missing the required field "${String(problem.params['missingProperty'])}".`;
    case 'additionalProperties':
      return `${field} has a field "${String(problem.params['additionalProperty'])}" this route does not know; check its spelling against src/http/README.md.`;
    case 'discriminator':
      return `${field}.type ${JSON.stringify(problem.params['tagValue'] ?? null)} is not an operation this route knows; use one of push, ack, kv.put, kv.putIfAbsent, kv.delete, kv.incr, once.`;
    case 'enum':
      return `${field} must be one of ${(problem.params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}.`;
    default:
      return `${field} ${problem.message ?? 'is not valid'}.`;
  }
}

function answer(statusCode: number, code: HttpErrorCode, message: string): ErrorAnswer {
  return { statusCode, code, message, error: message };
}

/** Maps anything a route or fastify throws to the answer the client gets. */
export function toErrorAnswer(error: unknown, bodyLimit?: number): ErrorAnswer {
  if (isCoreError(error)) {
    const hint = error.code === 'unknown_queue' ? ' POST /api/v1/configure creates a queue.' : '';
    return answer(CORE_ERROR_STATUS[error.code] ?? 400, error.code, error.message + hint);
  }
  if (error instanceof HttpError) return answer(error.statusCode, error.code, error.message);
  if (isRpcError(error)) {
    // The hop to a core in another process: did the request leave?
    if (error.code === 'unavailable') return { ...answer(503, 'core_unavailable', `${error.message} Nothing was written; send it again.`), retryAfterSeconds: 1 };
    if (error.code === 'connection_lost' || error.code === 'deadline_exceeded') {
      return answer(
        504,
        'outcome_unknown',
        `${error.message} Do not resend it blindly: send it again with the same Idempotency-Key (or, for a push, the same transactionIds, which the queue deduplicates), or check its effect first.`,
      );
    }
  }
  const fastifyError = error as FastifyError & { validation?: SchemaProblem[]; validationContext?: string };
  if (fastifyError.validation) {
    return answer(400, 'invalid_request', describeSchemaProblem(fastifyError.validation, fastifyError.validationContext ?? 'request'));
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return answer(
        413,
        'body_too_large',
        `The request body is larger than the ${bodyLimit === undefined ? '' : `${bodyLimit}-byte `}limit this server accepts; send fewer items per request, or raise the limit.`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return answer(415, 'unsupported_media_type', 'The request body must be JSON: send it with Content-Type: application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return answer(400, 'invalid_json', 'The request says it carries JSON but its body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return answer(400, 'invalid_request', 'The Content-Length header does not match the body that arrived; send the body whole.');
  }
  if (error instanceof SyntaxError || fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return answer(400, 'invalid_json', `The request body is not valid JSON (${(error as Error).message}); send a JSON object.`);
  }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return answer(fastifyError.statusCode, 'invalid_request', fastifyError.message.endsWith('.') ? fastifyError.message : `${fastifyError.message}.`);
  }
  return answer(500, 'internal', 'The server failed to handle this request; it has been logged. Retry it, and report it if it keeps failing.');
}

/** Installs the error and not-found handlers: every failure answers through toErrorAnswer. */
export function installErrorHandlers(app: FastifyInstance, bodyLimit: number): void {
  // Queen's clients send Content-Type: application/json on every request, a
  // bodyless DELETE included: a request that carries no body has nothing to parse.
  app.addHook('onRequest', async (request) => {
    const { headers } = request;
    if (headers['content-type']?.includes('json') && (headers['content-length'] === '0' || (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined))) {
      delete headers['content-type'];
    }
  });
  app.setErrorHandler((error, request, reply) => {
    const { retryAfterSeconds, ...out } = toErrorAnswer(error, bodyLimit);
    // A fault of the store is logged once per episode by the engine, not per
    // request; a 501 names a feature not built: answers, not failures of this server.
    const expected = out.statusCode < 500 || out.statusCode === 501 || out.code === 'unavailable' || out.code === 'closed' || out.code === 'storage_full' || out.code === 'core_unavailable';
    if (expected) request.log.debug({ code: out.code, url: request.url }, out.message);
    else request.log.error({ err: error, url: request.url }, 'HTTP request failed');
    const retryAfter = retryAfterSeconds ?? (out.statusCode === 503 || out.statusCode === 429 ? RETRY_AFTER_SECONDS : undefined);
    if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter));
    const key = request.headers['idempotency-key'];
    void reply.status(out.statusCode).send(out.code === 'outcome_unknown' ? { ...out, idempotencyKey: typeof key === 'string' ? key : null } : out);
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send(
      answer(404, 'not_found', `There is no route ${request.method} ${request.url.split('?')[0]}; the routes are listed in src/http/README.md.`),
    );
  });
}
