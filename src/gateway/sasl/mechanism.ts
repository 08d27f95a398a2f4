/**
 * A SASL mechanism as the gateway runs it: each authentication attempt is an
 * exchange of tokens that ends in a principal or a refusal. PLAIN takes one
 * step, SCRAM two, OAUTHBEARER one (or two when it refuses, to send the
 * client its error as RFC 7628 asks).
 */

export type SaslStep =
  /** More is needed from the client: send these bytes and wait. */
  | { kind: 'challenge'; bytes: Buffer }
  /**
   * Authenticated as `user`. `bytes` go to the client (SCRAM's server-final
   * message). `expiresAtMs` bounds the session by the credential's own life
   * (an OAuth token's exp).
   */
  | { kind: 'done'; user: string; bytes: Buffer; expiresAtMs?: number }
  /**
   * Refused. `message` is what the client is told (never which part was
   * wrong); `user` names who tried, for the log line; `bytes` go to the client
   * first when the mechanism says so (OAUTHBEARER's error JSON).
   */
  | { kind: 'failed'; message: string; user: string | null; bytes?: Buffer };

export interface SaslExchange {
  step(token: Buffer): Promise<SaslStep>;
}

export interface SaslMechanism {
  /** As clients name it: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER. */
  readonly name: string;
  start(): SaslExchange;
}

/** The one answer a wrong user name and a wrong password both get, so neither is told apart. */
export const INVALID_CREDENTIALS = 'Authentication failed: Invalid username or password';
