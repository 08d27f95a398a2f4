/**
 * SASL OAUTHBEARER (RFC 7628) with JWTs checked by jose (the maintained
 * JOSE library, docs/security-libraries.md): the token's signature against
 * the operator's keys (a PEM file of public keys or certificates, or a JWKS
 * file), its exp (required) and nbf with Kafka's clock skew (its
 * sasl.oauthbearer.clock.skew.seconds default, 30 s), sub (required: the
 * principal, User:<sub>, Kafka's default sasl.oauthbearer.sub.claim.name),
 * and aud and iss when configured. Only the asymmetric algorithms below are
 * accepted: an unsecured JWS (alg "none") never is, nor an HMAC one.
 *
 * The token's exp bounds the session when re-authentication is on (KIP-368).
 * A refusal goes as RFC 7628 and Kafka do it: an error JSON as a challenge,
 * then, when the client answers with the lone %x01, SASL_AUTHENTICATION_FAILED
 * carrying that JSON.
 */
import { createPublicKey } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { createLocalJWKSet, errors, jwtVerify, type CryptoKey, type JSONWebKeySet, type JWK, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import type { Logger } from 'pino';
import type { SaslMechanism, SaslStep } from './mechanism.js';

export interface OAuthBearerOptions {
  /** PEM public keys/certificates, or a JWKS JSON document ({ "keys": [...] }). */
  keysFile: string;
  /** When set, the token's aud must be (or contain) it. */
  audience?: string;
  /** When set, the token's iss must equal it. */
  issuer?: string;
}

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** Kafka's sasl.oauthbearer.clock.skew.seconds default. */
const CLOCK_SKEW_SECONDS = 30;

/** The keys of a PEM or JWKS file, as a JWK set (a PEM key becomes a JWK without kid). */
export function readVerificationKeys(file: string): JSONWebKeySet {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`The OAUTHBEARER keys file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); check the path.`);
  }
  try {
    if (text.trimStart().startsWith('{')) {
      const jwks = JSON.parse(text) as { keys?: JWK[] };
      if (!Array.isArray(jwks.keys) || jwks.keys.length === 0) throw new Error('a JWKS document needs a non-empty "keys" list');
      // Imported here so that a bad key stops the start (or a reload) instead of failing each login.
      for (const jwk of jwks.keys) createPublicKey({ key: jwk as never, format: 'jwk' });
      return { keys: jwks.keys };
    }
    const blocks = text.match(/-----BEGIN [A-Z ]+-----[\s\S]+?-----END [A-Z ]+-----/g) ?? [];
    if (blocks.length === 0) throw new Error('no PEM block found');
    return { keys: blocks.map((pem) => createPublicKey(pem).export({ format: 'jwk' }) as JWK) };
  } catch (e) {
    throw new Error(`The OAUTHBEARER keys file ${file} does not hold usable public keys: ${(e as Error).message}. Give PEM public keys or certificates, or a JWKS document.`);
  }
}

/**
 * jose's key selection for a set (by kid, key type and curve for the
 * token's alg), with one addition: keys that carry no kid (every PEM key)
 * are tried for a token whose kid names none of the set.
 */
export function keySelector(set: JSONWebKeySet): JWTVerifyGetKey {
  const all = createLocalJWKSet(set);
  const unnamed = set.keys.some((k) => k.kid === undefined) ? createLocalJWKSet({ keys: set.keys.filter((k) => k.kid === undefined) }) : null;
  return async (header, token) => {
    try {
      return await all(header, token);
    } catch (e) {
      if (unnamed === null || header.kid === undefined || !(e instanceof errors.JWKSNoMatchingKey)) throw e;
      return unnamed({ ...header, kid: undefined }, token);
    }
  };
}

/** Verifies against the selected key, or each of several that fit (two PEM keys of one type), as jose's docs show. */
async function verified(token: string, keys: JWTVerifyGetKey, options: JWTVerifyOptions) {
  try {
    return await jwtVerify(token, keys, options);
  } catch (e) {
    if (!(e instanceof errors.JWKSMultipleMatchingKeys)) throw e;
    for await (const key of e as unknown as AsyncIterable<CryptoKey>) {
      try {
        return await jwtVerify(token, key, options);
      } catch (inner) {
        if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}

/** The sentence for the log of why jose refused a token. */
function refusalReason(e: unknown, token: string): string {
  if (e instanceof errors.JWTExpired) return 'the token has expired';
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === 'nbf') return 'the token is not valid yet (nbf)';
    if (e.claim === 'aud') return 'the token is not meant for this audience';
    if (e.claim === 'iss') return 'the token was issued by another issuer';
    if (e.reason === 'missing') return `the token has no ${e.claim} claim`;
    return `the token's ${e.claim} claim is not valid (${e.message})`;
  }
  if (e instanceof errors.JOSEAlgNotAllowed || e instanceof errors.JOSENotSupported) {
    return `the token's algorithm ${JSON.stringify(headerOf(token).alg)} is not accepted (unsecured tokens never are)`;
  }
  if (e instanceof errors.JWSSignatureVerificationFailed || e instanceof errors.JWKSNoMatchingKey) return 'the token signature does not verify against the configured keys';
  if (e instanceof errors.JWSInvalid || e instanceof errors.JWTInvalid) return `the token is not a signed JWT (${(e as Error).message})`;
  throw e;
}

function headerOf(token: string): { alg?: unknown } {
  try {
    return JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { alg?: unknown };
  } catch {
    return {};
  }
}

/** Why the token is refused, or its subject and expiry. */
export async function checkToken(token: string, keys: JWTVerifyGetKey, options: OAuthBearerOptions, nowMs: number): Promise<{ sub: string; expMs: number } | string> {
  let payload;
  try {
    ({ payload } = await verified(token, keys, {
      algorithms: ALGORITHMS,
      clockTolerance: CLOCK_SKEW_SECONDS,
      currentDate: new Date(nowMs),
      requiredClaims: ['exp', 'sub'],
      ...(options.audience !== undefined ? { audience: options.audience } : {}),
      ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
    }));
  } catch (e) {
    return refusalReason(e, token);
  }
  if (typeof payload.sub !== 'string' || payload.sub === '') return 'the token has no sub claim';
  return { sub: payload.sub, expMs: payload.exp! * 1000 };
}

export class OAuthBearerKeys {
  private keys: JWTVerifyGetKey;
  private readonly reload = () => {
    try {
      const set = readVerificationKeys(this.options.keysFile);
      this.keys = keySelector(set);
      this.log?.info({ file: this.options.keysFile, keys: set.keys.length }, 'OAUTHBEARER keys reloaded');
    } catch (e) {
      this.log?.warn({ err: (e as Error).message }, 'OAUTHBEARER keys file changed but does not load; keeping the previous keys');
    }
  };

  constructor(
    readonly options: OAuthBearerOptions,
    private readonly log?: Logger,
  ) {
    this.keys = keySelector(readVerificationKeys(options.keysFile));
  }

  get current(): JWTVerifyGetKey {
    return this.keys;
  }

  watch(): () => void {
    watchFile(this.options.keysFile, { interval: 1_000, persistent: false }, this.reload);
    return () => unwatchFile(this.options.keysFile, this.reload);
  }
}

const KVSEP = '\u0001';

/** The sub a refused token claims, for the log line only (it proved nothing). */
function unverifiedSubject(token: string): string | null {
  try {
    const sub = (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown }).sub;
    return typeof sub === 'string' ? `${sub} (unverified)` : null;
  } catch {
    return null;
  }
}

export function oauthBearerMechanism(keys: OAuthBearerKeys, now: () => number = Date.now): SaslMechanism {
  return {
    name: 'OAUTHBEARER',
    start() {
      let refusal: { json: string; why: string; user: string | null } | null = null;
      return {
        async step(token: Buffer): Promise<SaslStep> {
          const text = token.toString('utf8');
          if (refusal !== null) {
            // The client's answer to our error challenge (a lone %x01) ends the exchange.
            return { kind: 'failed', message: refusal.json, detail: refusal.why, user: refusal.user, alreadyLogged: true };
          }
          // gs2-header, then kvpairs separated by %x01: "n,,\x01auth=Bearer <token>\x01\x01".
          const [gs2, ...pairs] = text.split(KVSEP);
          if (gs2 === undefined || !/^[ny],(a=[^,]*)?,$/.test(gs2)) return { kind: 'failed', message: 'Authentication failed: the OAUTHBEARER message is malformed', user: null };
          const auth = pairs.find((p) => p.startsWith('auth='));
          const match = auth === undefined ? null : /^auth=Bearer +(\S+)$/i.exec(auth);
          if (!match) return { kind: 'failed', message: 'Authentication failed: the OAUTHBEARER message carries no bearer token', user: null };
          const checked = await checkToken(match[1]!, keys.current, keys.options, now());
          if (typeof checked === 'string') {
            refusal = { json: JSON.stringify({ status: 'invalid_token' }), why: checked, user: unverifiedSubject(match[1]!) };
            return { kind: 'challenge', bytes: Buffer.from(refusal.json), refusal: { detail: checked, user: refusal.user } };
          }
          return { kind: 'done', user: checked.sub, bytes: Buffer.alloc(0), expiresAtMs: checked.expMs };
        },
      };
    },
  };
}
