/**
 * One connection's SASL state, on a SASL_PLAINTEXT or SASL_SSL listener, as
 * Kafka's SaslServerAuthenticator keeps it:
 *
 *   handshake ── SaslHandshake ──▶ authenticate ── SaslAuthenticate … ──▶ authenticated
 *        ▲ ApiVersions allowed                                 │
 *        └──────────── SaslHandshake (re-authentication, KIP-368) ◀┘
 *
 * Until the first authentication succeeds only ApiVersions, SaslHandshake and
 * SaslAuthenticate are served; anything else closes the connection (Kafka:
 * "Unexpected Kafka request ... during SASL handshake"). SaslHandshake v0
 * means the tokens that follow are bare size-prefixed frames with no Kafka
 * header (the pre-KIP-152 path); v1 wraps them in SaslAuthenticate.
 *
 * A failed attempt is answered SASL_AUTHENTICATION_FAILED (58) with a message
 * that does not say which part was wrong, logged once (who, from where, never
 * the password), and the connection closes after the answer, as Kafka's does.
 *
 * Sessions: with maxReauthMs > 0 (Kafka's connections.max.reauth.ms) a
 * session lasts that long, or until the credential expires when sooner (an
 * OAuth token's exp); SaslAuthenticate v1+ tells the client, which
 * re-authenticates in time. A request other than SaslHandshake on a session
 * past its end closes the connection, as Kafka's broker does. Re-authentication
 * must keep the mechanism and the principal.
 */
import { ErrorCode } from '../../../protocol/error-codes.js';
import { NONE } from '../kafka-errors.js';
import type { SaslExchange, SaslMechanism } from './mechanism.js';

export interface SaslSettings {
  /** The enabled mechanisms by name, in the order SaslHandshake lists them. */
  mechanisms: ReadonlyMap<string, SaslMechanism>;
  /** Kafka's connections.max.reauth.ms: how long a session lasts; 0 = until the connection closes. */
  maxReauthMs: number;
}

export interface AuthenticationEvents {
  /** A session began or was renewed. */
  authenticated(principal: string, mechanism: string): void;
  /** An attempt failed: log it (unless `logged`) and close the connection once this answer is out. */
  failed(reason: string, user: string | null, mechanism: string | null, logged?: boolean): void;
  /** An attempt failed but the exchange goes on one more step (the client is told in a challenge): log it. */
  refused(reason: string, user: string | null, mechanism: string): void;
}

type Stage = 'handshake' | 'authenticate' | 'authenticated' | 'failed';

export interface HandshakeAnswer {
  errorCode: number;
  mechanisms: string[];
}

export interface AuthenticateAnswer {
  errorCode: number;
  errorMessage: string | null;
  authBytes: Buffer;
  sessionLifetimeMs: bigint;
}

/** The error message of an answer without error: Kafka's is the empty string (its generated default), not null. */
const NO_MESSAGE = '';
const API_VERSIONS = 18;
const SASL_HANDSHAKE = 17;
const SASL_AUTHENTICATE = 36;

export class SaslAuthenticator {
  private stage: Stage = 'handshake';
  /** SaslHandshake v0 was used: tokens come as bare frames. */
  private rawTokens = false;
  private mechanism: SaslMechanism | null = null;
  private exchange: SaslExchange | null = null;
  /** The principal's user name once authenticated; re-authentication must keep it. */
  private user: string | null = null;
  private sessionMechanism: string | null = null;
  /** When the session ends (ms since the epoch); null = never. */
  private sessionEndsAtMs: number | null = null;

  constructor(
    private readonly settings: SaslSettings,
    private readonly events: AuthenticationEvents,
  ) {}

  /** Whether the first authentication has succeeded (a re-authentication in progress keeps it). */
  get hasAuthenticated(): boolean {
    return this.user !== null;
  }

  /** Whether the next frame is a bare SASL token (after SaslHandshake v0) rather than a Kafka request. */
  get expectsRawToken(): boolean {
    return this.stage === 'authenticate' && this.rawTokens;
  }

  /**
   * Why a request with this API key may not be served now, or null when it
   * may. A reason closes the connection.
   */
  refusal(apiKey: number, nowMs: number): string | null {
    if (this.stage === 'failed') return 'a request arrived after authentication failed';
    if (this.stage === 'authenticate') {
      // A second SaslHandshake is answered ILLEGAL_SASL_STATE before the close, as Kafka's is (see handshake()).
      return apiKey === SASL_AUTHENTICATE || apiKey === SASL_HANDSHAKE ? null : `a request with API key ${apiKey} arrived where SaslAuthenticate was expected`;
    }
    if (this.user === null) {
      return apiKey === API_VERSIONS || apiKey === SASL_HANDSHAKE ? null : `a request with API key ${apiKey} arrived before SASL authentication`;
    }
    if (this.sessionEndsAtMs !== null && nowMs >= this.sessionEndsAtMs && apiKey !== SASL_HANDSHAKE) {
      return `the authentication session of User:${this.user} expired without re-authentication`;
    }
    return null;
  }

  handshake(mechanismName: string, version: number): HandshakeAnswer {
    const mechanisms = [...this.settings.mechanisms.keys()];
    if (this.stage === 'authenticated' && this.settings.maxReauthMs === 0) {
      // Without re-authentication Kafka's request handler answers a second handshake.
      return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms };
    }
    if (this.stage !== 'handshake' && this.stage !== 'authenticated') {
      this.fail('SaslHandshake arrived in the middle of an authentication', null);
      return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms };
    }
    const mechanism = this.settings.mechanisms.get(mechanismName);
    if (!mechanism) {
      this.fail(`the client asked for SASL mechanism ${JSON.stringify(mechanismName)}, which is not enabled (enabled: ${mechanisms.join(', ')})`, null, mechanismName);
      return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms };
    }
    if (this.sessionMechanism !== null && this.sessionMechanism !== mechanismName) {
      this.fail(`re-authentication asked for ${mechanismName} but the session used ${this.sessionMechanism}`, this.user, mechanismName);
      return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms };
    }
    this.mechanism = mechanism;
    this.exchange = mechanism.start();
    this.rawTokens = version === 0;
    this.stage = 'authenticate';
    return { errorCode: NONE, mechanisms };
  }

  /** One token of the exchange. `sessionLifetimeMs` is 0 unless a session has just begun with an end. */
  async authenticate(token: Buffer, nowMs: () => number): Promise<AuthenticateAnswer> {
    const answer = (errorCode: number, errorMessage: string | null, authBytes: Buffer = Buffer.alloc(0), sessionLifetimeMs = 0n): AuthenticateAnswer => ({
      errorCode,
      errorMessage,
      authBytes,
      sessionLifetimeMs,
    });
    if (this.stage !== 'authenticate' || !this.exchange || !this.mechanism) {
      if (this.stage === 'authenticated') return answer(ErrorCode.ILLEGAL_SASL_STATE, 'SaslAuthenticate request received after successful authentication');
      this.fail('SaslAuthenticate arrived before SaslHandshake', null);
      return answer(ErrorCode.ILLEGAL_SASL_STATE, 'SaslAuthenticate arrived before SaslHandshake chose a mechanism');
    }
    const mechanism = this.mechanism.name;
    const step = await this.exchange.step(token);
    if (step.kind === 'challenge') {
      if (step.refusal) this.events.refused(step.refusal.detail, step.refusal.user, mechanism);
      return answer(NONE, NO_MESSAGE, step.bytes);
    }
    if (step.kind === 'failed') {
      this.fail(step.detail ?? step.message, step.user, mechanism, step.alreadyLogged);
      return answer(ErrorCode.SASL_AUTHENTICATION_FAILED, step.message, step.bytes);
    }
    if (this.user !== null && step.user !== this.user) {
      const message = `Cannot change principals during re-authentication from User:${this.user} to User:${step.user}`;
      this.fail(message, step.user, mechanism);
      return answer(ErrorCode.SASL_AUTHENTICATION_FAILED, message);
    }
    const now = nowMs();
    let lifetime = 0;
    if (this.settings.maxReauthMs > 0) {
      lifetime = this.settings.maxReauthMs;
      if (step.expiresAtMs !== undefined) lifetime = Math.min(lifetime, step.expiresAtMs - now);
      if (lifetime <= 0) {
        const message = 'Authentication failed: the credential has expired';
        this.fail(message, step.user, mechanism);
        return answer(ErrorCode.SASL_AUTHENTICATION_FAILED, message);
      }
    }
    this.user = step.user;
    this.sessionMechanism = mechanism;
    this.sessionEndsAtMs = lifetime > 0 ? now + lifetime : null;
    this.stage = 'authenticated';
    this.exchange = null;
    this.events.authenticated(principalOf(step.user), mechanism);
    return answer(NONE, NO_MESSAGE, step.bytes, BigInt(lifetime));
  }

  private fail(reason: string, user: string | null, mechanism: string | null = this.mechanism?.name ?? null, logged = false): void {
    this.stage = 'failed';
    this.exchange = null;
    this.events.failed(reason, user, mechanism, logged);
  }
}

/** Kafka's principal for an authenticated user name. */
export function principalOf(user: string): string {
  return `User:${user}`;
}

export const ANONYMOUS = 'User:ANONYMOUS';
