import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AclOperation, AclResourceType } from '../core/core.js';
import { CLUSTER_NAME } from '../access/acl-operations.js';
import type { Access, Authorizer } from '../access/authorizer.js';
import { HttpError } from './errors.js';
import { parsePartitionId } from './partition-ids.js';

/**
 * Who may use the HTTP API, and on which queues (issue 19). Off unless
 * configured; on, every route but GET /health needs credentials:
 *
 * - `Authorization: Bearer <token>`, tokens from a file of `name=token`
 *   lines (the principal is User:<name>), or
 * - `Authorization: Basic` with a name and password the Kafka listeners'
 *   SASL/PLAIN would accept (its users file, then the SCRAM store).
 *
 * Missing or wrong credentials answer 401 with WWW-Authenticate. With the
 * gateway's authorizer on, the same ACLs apply as over Kafka, a queue being a
 * TOPIC resource: push needs WRITE on its queues, pop and ack READ (and READ
 * on the consumer group when one is named), configure ALTER_CONFIGS,
 * deleting a queue DELETE, describing one DESCRIBE. Routes that list or
 * span every queue (listings, overview, messages, consumer groups) need
 * DESCRIBE on the cluster, and the KV and once store DESCRIBE (reads) or
 * ALTER (writes) on the cluster: Kafka has no resource for them. A refusal
 * answers 403 saying which operation on which resource is missing.
 */

export interface HttpAccessOptions {
  /** `name=token` lines; reloaded on nothing, read once at start. */
  tokensFile?: string;
  /** Checks a Basic name and password; absent, Basic is not accepted. */
  checkPassword?: (user: string, password: string) => Promise<boolean>;
  /** The gateway's authorizer; absent or off, any authenticated principal may do everything. */
  authorizer?: Authorizer;
}

/** One operation on one resource that a request needs an ACL for. */
export type Need = { operation: AclOperation; type: AclResourceType; name: string };

export const cluster = (operation: AclOperation): Need => ({ operation, type: 'CLUSTER', name: CLUSTER_NAME });
export const topic = (operation: AclOperation, name: unknown): Need[] => (typeof name === 'string' ? [{ operation, type: 'TOPIC', name }] : []);
const group = (name: unknown): Need[] => (typeof name === 'string' && name !== '' ? [{ operation: 'READ', type: 'GROUP', name }] : []);

type Body = Record<string, unknown> | undefined;
type Params = Record<string, string>;
type Query = Record<string, unknown>;

/** What a route needs, from its request; a route may declare it in its config as `needs` (the console's do). */
export type RouteNeeds = (body: Body, params: Params, query: Query) => Need[];

/**
 * A route's access settings beside its handler, in its fastify config:
 * `needs` (checked before the handler runs), `open` (no credentials: the
 * console's page and scripts, which carry no data), `challenge: false` (a 401
 * without WWW-Authenticate, so a browser does not open its own password
 * dialog over the console's sign-in form).
 */
export interface RouteAccess {
  needs?: RouteNeeds;
  open?: boolean;
  challenge?: boolean;
}

/** What each authenticated request may do, for routes that list only what the principal may see. */
const grants = new WeakMap<FastifyRequest, Pick<Access, 'allows' | 'principal'>>();

/** Whether this request's principal may do `need` (always, with no access control or no authorizer). */
export function permits(request: FastifyRequest, need: Need): boolean {
  return grants.get(request)?.allows(need.operation, need.type, need.name) ?? true;
}

/** Refuses the request (403) unless its principal may do one of `alternatives` (Kafka's CreateTopics: CREATE on the cluster or on the topic). */
export function demandOneOf(request: FastifyRequest, alternatives: Need[]): void {
  if (alternatives.some((need) => permits(request, need))) return;
  throw refusal(grants.get(request)?.principal ?? 'This principal', alternatives[0]!);
}

function refusal(principal: string, missing: Need): HttpError {
  const what = missing.type === 'CLUSTER' ? 'the cluster' : `${RESOURCE_WORDS[missing.type] ?? missing.type.toLowerCase()} '${missing.name}'`;
  return new HttpError(403, 'forbidden', `${principal} may not do this: it needs ${missing.operation} on ${what} (an ACL, as over Kafka).`);
}

const RESOURCE_WORDS: Partial<Record<AclResourceType, string>> = { TOPIC: 'queue', GROUP: 'consumer group', TRANSACTIONAL_ID: 'transactional id' };

/** The queue an ack names, by queue or by partitionId. */
function ackedQueue(item: Record<string, unknown>): string | undefined {
  if (typeof item.queue === 'string') return item.queue;
  if (typeof item.partitionId === 'string') {
    try {
      return parsePartitionId(item.partitionId).queue;
    } catch {
      return undefined; // the route refuses it with its own sentence
    }
  }
  return undefined;
}

/** What each route needs, by method and route URL; a route not listed needs ALTER on the cluster. */
const NEEDS: Record<string, (body: Body, params: Params, query: Query) => Need[]> = {
  'POST /api/v1/push': (body) => ((body?.items as Record<string, unknown>[] | undefined) ?? []).flatMap((i) => topic('WRITE', i.queue)),
  'GET /api/v1/pop/queue/:queue': (_b, params, query) => [...topic('READ', params.queue), ...group(query.consumerGroup)],
  'GET /api/v1/pop/queue/:queue/partition/:partition': (_b, params, query) => [...topic('READ', params.queue), ...group(query.consumerGroup)],
  'POST /api/v1/ack': (body) => [...topic('READ', ackedQueue(body ?? {})), ...group(body?.consumerGroup)],
  'POST /api/v1/ack/batch': (body) => [
    ...((body?.acknowledgments as Record<string, unknown>[] | undefined) ?? []).flatMap((a) => [...topic('READ', ackedQueue(a)), ...group(a.consumerGroup)]),
    ...group(body?.consumerGroup),
  ],
  // A lease id is unguessable and names what it was granted for.
  'POST /api/v1/lease/:leaseId/extend': () => [],
  'POST /api/v1/configure': (body) => topic('ALTER_CONFIGS', body?.queue),
  'GET /api/v1/resources/queues/:queue': (_b, params) => topic('DESCRIBE', params.queue),
  'DELETE /api/v1/resources/queues/:queue': (_b, params) => topic('DELETE', params.queue),
  'POST /api/v1/transaction': (body) =>
    ((body?.operations as Record<string, unknown>[] | undefined) ?? []).flatMap((op) => {
      if (op.type === 'push') return ((op.items as Record<string, unknown>[] | undefined) ?? []).flatMap((i) => topic('WRITE', i.queue));
      if (op.type === 'ack') return [...topic('READ', ackedQueue(op)), ...group(op.consumerGroup)];
      return [cluster('ALTER')];
    }),
  // As Kafka's DeleteGroups, OffsetDelete and an offset reset from outside the group ask.
  'DELETE /api/v1/consumer-groups/:group': (_b, params) => [{ operation: 'DELETE', type: 'GROUP', name: params.group! }],
  'DELETE /api/v1/consumer-groups/:group/queues/:queue': (_b, params) => [{ operation: 'DELETE', type: 'GROUP', name: params.group! }, ...topic('READ', params.queue)],
  'POST /api/v1/consumer-groups/:group/queues/:queue/seek': (_b, params) => [...group(params.group), ...topic('READ', params.queue)],
  'POST /api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek': (_b, params) => [...group(params.group), ...topic('READ', params.queue)],
  'GET /api/v1/resources/queues': () => [cluster('DESCRIBE')],
  'GET /api/v1/resources/overview': () => [cluster('DESCRIBE')],
  'GET /api/v1/resources/namespaces': () => [cluster('DESCRIBE')],
  'GET /api/v1/resources/tasks': () => [cluster('DESCRIBE')],
  'GET /api/v1/resources/consumer-groups': () => [cluster('DESCRIBE')],
  'GET /api/v1/consumer-groups': () => [cluster('DESCRIBE')],
  'GET /api/v1/dlq': () => [cluster('DESCRIBE')],
  'GET /api/v1/messages': () => [cluster('DESCRIBE')],
  'GET /metrics': () => [cluster('DESCRIBE')],
  'GET /metrics/prometheus': () => [cluster('DESCRIBE')],
  'GET /api/v1/kv/:ns': () => [cluster('DESCRIBE')],
  'GET /api/v1/kv/:ns/:key': () => [cluster('DESCRIBE')],
};

const OPEN_ROUTES = new Set(['GET /health']);

function readTokens(file: string): Map<string, string> {
  const tokens = new Map<string, string>();
  readFileSync(file, 'utf8').split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const eq = line.indexOf('=');
    if (eq <= 0 || eq === line.length - 1) throw new Error(`${file} line ${i + 1}: expected name=token.`);
    tokens.set(line.slice(eq + 1), `User:${line.slice(0, eq)}`);
  });
  return tokens;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function installAccessControl(app: FastifyInstance, options: HttpAccessOptions): void {
  const tokens = options.tokensFile ? readTokens(options.tokensFile) : new Map<string, string>();
  const schemes = [...(tokens.size > 0 ? ['Bearer'] : []), ...(options.checkPassword ? ['Basic'] : [])];
  if (schemes.length === 0) throw new Error('HTTP authentication needs a tokens file with at least one token, or SASL/PLAIN users for Basic.');
  const challenge = schemes.map((s) => `${s} realm="queen"`).join(', ');

  const authenticate = async (request: FastifyRequest): Promise<string> => {
    const header = request.headers.authorization ?? '';
    const space = header.indexOf(' ');
    const scheme = space > 0 ? header.slice(0, space).toLowerCase() : '';
    const credentials = space > 0 ? header.slice(space + 1).trim() : '';
    if (scheme === 'bearer' && tokens.size > 0) {
      for (const [token, principal] of tokens) if (sameSecret(token, credentials)) return principal;
      throw new HttpError(401, 'unauthenticated', 'The bearer token is not one this server knows; send a token from its tokens file.');
    }
    if (scheme === 'basic' && options.checkPassword) {
      const decoded = Buffer.from(credentials, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const user = colon > 0 ? decoded.slice(0, colon) : '';
      if (user !== '' && (await options.checkPassword(user, decoded.slice(colon + 1)))) return `User:${user}`;
      throw new HttpError(401, 'unauthenticated', 'The name and password were not accepted; send those of a user the Kafka listeners accept.');
    }
    throw new HttpError(401, 'unauthenticated', `This API needs credentials: send an Authorization header (${schemes.join(' or ')}).`);
  };

  app.addHook('preHandler', async (request, reply) => {
    const route = `${request.method} ${request.routeOptions.url ?? ''}`;
    const declared = request.routeOptions.config as RouteAccess;
    if (OPEN_ROUTES.has(route) || declared.open || request.routeOptions.url === undefined) return;
    let principal: string;
    try {
      principal = await authenticate(request);
    } catch (e) {
      if (declared.challenge !== false) reply.header('WWW-Authenticate', challenge);
      throw e;
    }
    const authorizer = options.authorizer;
    if (!authorizer?.enabled) return;
    const needs = (declared.needs ?? NEEDS[route] ?? (() => [cluster('ALTER')]))(request.body as Body, request.params as Params, request.query as Query);
    const access = authorizer.accessFor(principal, request.ip);
    grants.set(request, access);
    const missing = needs.find((n) => !access.allows(n.operation, n.type, n.name));
    if (missing) throw refusal(principal, missing);
  });
}
