import type { Logger } from 'pino';
import type { RequestOf, ResponseOf } from '../../protocol/codec/types.js';
import type { RequestHeader } from '../../protocol/headers.js';
import type { ApiDef } from '../../protocol/schema/definition.js';
import type { ClusterView } from '../cluster/membership.js';
import type { Core } from '../core/index.js';
import type { Access, Authorizer } from '../access/authorizer.js';
import type { QuotaManager, RequestQuota } from './quotas.js';
import type { SecurityProtocol } from './listeners.js';
import type { SaslAuthenticator } from './sasl/authenticator.js';

/**
 * What every API handler sees. One handler file per API key under
 * ./handlers/, each exporting an ApiHandler; ./handlers/index.ts lists them,
 * and ApiVersions is derived from that list, so what the gateway advertises
 * and what it implements cannot drift.
 *
 * A handler turns a decoded request into a response object (fields by
 * camelCase name, see protocol/codec). Protocol errors go into the
 * response's error codes; a thrown error means "this connection is dead" and
 * closes it, logged.
 */

export interface BrokerAddress {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

/** Settings handlers read; the server's own limits live in its config. */
export interface GatewaySettings {
  clusterId: string;
  /** This gateway as clients must dial it (Metadata, FindCoordinator, DescribeCluster). */
  advertised: BrokerAddress;
  autoCreateTopics: boolean;
  defaultPartitions: number;
  /** Largest Fetch response a client may ask for, whatever it asks. */
  fetchMaxBytes: number;
  /** Fetch sessions kept per gateway (KIP-227). */
  maxFetchSessions: number;
  /** The transaction.version level ApiVersions finalizes (0-2; 2, the default as in Kafka 4, is KIP-890 part 2). */
  transactionVersion?: number;
  /** The live gateways of the cluster (src/cluster/membership.ts); absent for a gateway alone. */
  cluster?: ClusterView;
}

/** Per-connection state a handler may keep (fetch sessions are per gateway, not here). */
export interface ConnectionState {
  id: number;
  /** The client's address and port, as logs name the connection. */
  remoteAddress: string;
  /** The client's address alone: what Kafka reports as a group member's host. */
  remoteHost: string;
  clientId: string | null;
  /**
   * Who is on the other end, as Kafka names principals: `User:<name>` after
   * SASL, `User:<subject DN>` for a TLS client certificate (e.g.
   * `User:CN=app,O=Acme`), `User:ANONYMOUS` otherwise. Authorization keys on it.
   */
  principal: string;
  /** The listener the client came in on (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL). */
  listener: SecurityProtocol;
  /** The SASL exchange on a SASL listener; null on the others. */
  sasl: SaslAuthenticator | null;
  /** Aborted when the connection closes, so long-polls stop. */
  closed: AbortSignal;
  /**
   * Aborted when the gateway starts a graceful shutdown: long-polls should
   * answer with what they have now rather than wait out their maxWait.
   */
  draining: AbortSignal;
}

/** One line of ApiVersions: a key this gateway serves and its version range. */
export interface AdvertisedApi {
  apiKey: number;
  minVersion: number;
  maxVersion: number;
}

export interface HandlerContext {
  core: Core;
  settings: GatewaySettings;
  log: Logger;
  header: RequestHeader;
  connection: ConnectionState;
  /** Shared per-gateway state handlers keep between requests, by name (e.g. the fetch-session cache). */
  shared: Map<string, unknown>;
  /** Every API this gateway serves, from the handler registry (what ApiVersions answers). */
  apis: readonly AdvertisedApi[];
  /** What this request's principal may do: `if (!ctx.access.allows('WRITE', 'TOPIC', name))` (src/access/authorizer.ts). */
  access: Access;
  /** The gateway's authorizer: the ACL APIs refresh it after a change. */
  authorizer: Authorizer;
  /** This request against its client quotas: record bytes, learn the throttle time (quotas.ts). */
  quota: RequestQuota;
  /** The gateway's quotas: the quota APIs refresh them after a change. */
  quotas: QuotaManager;
}

/**
 * One API's handler. Typed by its definition: the request comes as the codec
 * decodes it and the answer goes as the codec encodes it
 * (protocol/codec/types.ts), so a misspelt or mistyped field fails to compile.
 */
// Bare `ApiHandler` is a handler of some API, as the registry keeps them:
// the type of an API's own handler cannot widen to the handler of every API.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface ApiHandler<A extends ApiDef = any> {
  /** The API's definition from protocol/messages. */
  api: A;
  /**
   * The versions the gateway serves, e.g. "4-17", declared here and nowhere
   * else (ApiVersions answers from it); within what Kafka defines for both messages.
   */
  versions: string;
  /**
   * Answers a request. Resolves to null when Kafka sends no response
   * (Produce with acks=0).
   */
  handle(request: RequestOf<A>, ctx: HandlerContext): Promise<ResponseOf<A> | null>;
  /**
   * The answer when the core could not answer (the store is down, the core
   * is closing): the request with every group or partition it names given
   * `errorCode`, a code the client retries. Without it such a request closes
   * its connection, which every client survives by reconnecting, but which
   * the group APIs answer instead, as Kafka's group coordinator does when
   * its log cannot be read or written (COORDINATOR_NOT_AVAILABLE).
   */
  unavailable?(request: RequestOf<A>, errorCode: number, ctx: HandlerContext): ResponseOf<A>;
}
