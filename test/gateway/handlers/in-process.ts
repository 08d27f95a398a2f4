/**
 * Handlers called in process: a memory core, the HandlerContext a connection
 * builds (connection.ts), and every request and response passed through the
 * project's codecs at the version asked for, so a test proves both what a
 * client would read and that the answer can be written at that version. No
 * sockets: framing, ordering and limits are the server's tests' business.
 *
 * One place builds the context (`contextFor`); a handler that needs more of it
 * (a principal, a SASL state) is added there.
 */
import pino from 'pino';
import type { Message } from '../../../protocol/codec/compile.js';
import { requestCodec, responseCodec } from '../../../protocol/codec/registry.js';
import { errorName } from '../../../protocol/error-codes.js';
import type { RequestHeader } from '../../../protocol/headers.js';
import { Reader } from '../../../protocol/primitives/reader.js';
import { Writer } from '../../../protocol/primitives/writer.js';
import { openCore, type CoordinatorOptions, type Core } from '../../../src/core/index.js';
import type { ApiHandler, ConnectionState, GatewaySettings, HandlerContext } from '../../../src/gateway/handler.js';
import { handlers as allHandlers } from '../../../src/gateway/handlers/index.js';
import { Authorizer, AUTHORIZATION_OFF, type AuthorizationSettings } from '../../../src/access/authorizer.js';
import { SaslAuthenticator, type SaslSettings } from '../../../src/gateway/sasl/authenticator.js';
import { DEFAULT_QUOTA_SETTINGS, QuotaManager } from '../../../src/gateway/quotas.js';
import { HandlerRegistry } from '../../../src/gateway/registry.js';

export interface InProcessOptions {
  /** Overrides of the CLI's defaults (src/cli/settings.ts). */
  settings?: Partial<GatewaySettings>;
  /** Group coordinator settings; the core's defaults otherwise. */
  groups?: Partial<CoordinatorOptions>;
  handlers?: readonly ApiHandler[];
  /** The authorizer's settings over the CLI's default (off); e.g. `{ enabled: true, superUsers: ['User:admin'] }`. */
  authorization?: Partial<AuthorizationSettings>;
}

/** What `serve` starts with when given no flags: node 0, auto-create on, one partition, 55 MiB fetches, 1000 sessions, transaction version 2. */
function defaultSettings(): GatewaySettings {
  return {
    clusterId: 'in-process-cluster',
    advertised: { nodeId: 0, host: '127.0.0.1', port: 9092, rack: null },
    autoCreateTopics: true,
    defaultPartitions: 1,
    fetchMaxBytes: 55 * 1024 * 1024,
    maxFetchSessions: 1000,
    transactionVersion: 2,
    // The core is in this process, as with `serve`.
  };
}

/** A client connection's state, with the two signals a connection aborts (closed, draining). */
export class InProcessConnection {
  readonly state: ConnectionState;
  private readonly closedController = new AbortController();
  private readonly drainController = new AbortController();

  /** What the connection's SASL exchange reported, in order: "authenticated User:x" or "failed <reason>". */
  readonly authentications: string[] = [];

  constructor(id: number, remoteHost = '127.0.0.1') {
    this.state = {
      id,
      remoteAddress: `${remoteHost}:50000`,
      remoteHost,
      clientId: null,
      closed: this.closedController.signal,
      draining: this.drainController.signal,
      principal: 'User:ANONYMOUS',
      listener: 'PLAINTEXT',
      sasl: null,
    };
  }

  /** Authenticated as `principal` (as a SASL or TLS listener would have set it). */
  as(principal: string): this {
    this.state.principal = principal;
    return this;
  }

  /** A SASL listener's connection: SaslHandshake and SaslAuthenticate run `settings`' mechanisms and set the principal as connection.ts does. */
  withSasl(settings: SaslSettings): this {
    this.state.sasl = new SaslAuthenticator(settings, {
      authenticated: (principal) => {
        this.state.principal = principal;
        this.authentications.push(`authenticated ${principal}`);
      },
      failed: (reason) => void this.authentications.push(`failed ${reason}`),
      refused: (reason) => void this.authentications.push(`refused ${reason}`),
    });
    return this;
  }

  /** The client went away: held calls (JoinGroup, Fetch) are released. */
  close(): void {
    this.closedController.abort(new Error('connection closed: by the test'));
  }

  /** The gateway starts shutting down: long-polls answer with what they have. */
  drain(): void {
    this.drainController.abort();
  }
}

/** A request the gateway does not serve at that version: over a socket the connection closes (ApiVersions answers UNSUPPORTED_VERSION). */
export class UnservedRequest extends Error {
  override readonly name = 'UnservedRequest';
}

export interface CallOptions {
  clientId?: string | null;
  /** The connection the request arrives on; the gateway's default one otherwise. */
  connection?: InProcessConnection;
}

export class InProcessGateway {
  readonly registry: HandlerRegistry;
  readonly shared = new Map<string, unknown>();
  /** The connection requests arrive on unless a call names another. */
  readonly connection: InProcessConnection;
  private nextConnectionId = 2;
  private nextCorrelationId = 1;
  private readonly log = pino({ level: 'silent' });
  private readonly authorizer: Authorizer;
  private readonly quotas: QuotaManager;

  private constructor(
    readonly core: Core,
    readonly settings: GatewaySettings,
    handlers: readonly ApiHandler[],
    authorization: Partial<AuthorizationSettings> = {},
  ) {
    this.registry = new HandlerRegistry(handlers);
    this.connection = new InProcessConnection(1);
    // As a gateway started without --authorizer unless the test turns it on; no quotas set.
    this.authorizer = new Authorizer(core, { ...AUTHORIZATION_OFF, ...authorization }, this.log);
    this.quotas = new QuotaManager(core, DEFAULT_QUOTA_SETTINGS, this.log);
  }

  static async open(options: InProcessOptions = {}): Promise<InProcessGateway> {
    const core = await openCore({ engine: 'memory', ...(options.groups ? { groups: options.groups } : {}) });
    const gateway = new InProcessGateway(core, { ...defaultSettings(), ...options.settings }, options.handlers ?? allHandlers, options.authorization);
    if (options.authorization?.enabled) await gateway.authorizer.refresh();
    return gateway;
  }

  /** Another client connection (its own signals and remote host). */
  openConnection(remoteHost?: string): InProcessConnection {
    return new InProcessConnection(this.nextConnectionId++, remoteHost);
  }

  /** The HandlerContext as connection.ts builds it for one request. */
  private contextFor(header: RequestHeader, connection: InProcessConnection): HandlerContext {
    connection.state.clientId = header.clientId;
    return {
      core: this.core,
      settings: this.settings,
      log: this.log,
      header,
      connection: connection.state,
      shared: this.shared,
      apis: this.registry.advertised,
      access: this.authorizer.accessFor(connection.state.principal, connection.state.remoteHost),
      authorizer: this.authorizer,
      quota: this.quotas.forRequest(connection.state.principal, header.clientId),
      quotas: this.quotas,
    };
  }

  /**
   * Sends one request as a client would: encoded and decoded at `version`,
   * handled, and the answer encoded and decoded at `version` too. Resolves to
   * the decoded response body, or null when Kafka sends none (acks=0).
   */
  async call(apiKey: number, version: number, request: Message, options: CallOptions = {}): Promise<Message | null> {
    const handler = this.registry.lookup(apiKey, version);
    if (!handler) throw new UnservedRequest(`API key ${apiKey} version ${version} is not served by this gateway`);
    const header: RequestHeader = { apiKey, apiVersion: version, correlationId: this.nextCorrelationId++, clientId: options.clientId === undefined ? 'in-process' : options.clientId };
    const decoded = roundTrip(requestCodec(apiKey, version), request, `${handler.api.name} v${version} request`);
    const response = await handler.handle(decoded, this.contextFor(header, options.connection ?? this.connection));
    if (response === null) return null;
    return roundTrip(responseCodec(apiKey, version), response, `${handler.api.name} v${version} response`);
  }

  /** `call` for requests that always get an answer. */
  async answer(apiKey: number, version: number, request: Message, options?: CallOptions): Promise<Message> {
    const response = await this.call(apiKey, version, request, options);
    if (response === null) throw new Error(`API key ${apiKey} v${version} sent no response`);
    return response;
  }

  /** The versions of an API this gateway serves, as ApiVersions advertises them. */
  versionsOf(apiKey: number): { min: number; max: number } {
    const api = this.registry.advertised.find((a) => a.apiKey === apiKey);
    if (!api) throw new Error(`API key ${apiKey} is not served`);
    return { min: api.minVersion, max: api.maxVersion };
  }

  async close(): Promise<void> {
    this.connection.close();
    this.authorizer.stop();
    await this.core.close();
  }
}

function roundTrip(codec: ReturnType<typeof requestCodec>, message: Message, what: string): Message {
  const w = new Writer();
  codec.encode(w, message);
  const r = new Reader(w.toBuffer());
  const decoded = codec.decode(r);
  if (r.remaining !== 0) throw new Error(`${what}: ${r.remaining} bytes left over after decoding what was encoded`);
  return decoded;
}

const SERVED = new HandlerRegistry(allHandlers);

/**
 * The oldest and newest version the gateway serves of an API (one entry when
 * they are the same), for tests that run once per end of the range.
 */
export function versionEnds(apiKey: number): number[] {
  const api = SERVED.advertised.find((a) => a.apiKey === apiKey);
  if (!api) throw new Error(`API key ${apiKey} is not served`);
  return api.minVersion === api.maxVersion ? [api.minVersion] : [api.minVersion, api.maxVersion];
}

/** A Kafka error code by name ("NONE" for 0), so a failing assertion says which error came. */
export function named(code: number): string {
  return code === 0 ? 'NONE' : errorName(code);
}
