/**
 * SASL OAUTHBEARER (RFC 7628) with JWTs checked here: the token's signature
 * against the operator's keys (a PEM file of public keys or certificates, or
 * a JWKS file), its exp (required, in the future), nbf, sub (required: the
 * principal, User:<sub>), and aud and iss when configured. An unsecured JWS
 * (alg "none") is refused; so is any algorithm the key cannot have made.
 *
 * The token's exp bounds the session when re-authentication is on (KIP-368).
 * A refusal goes as RFC 7628 and Kafka do it: an error JSON as a challenge,
 * then, when the client answers with the lone %x01, SASL_AUTHENTICATION_FAILED
 * carrying that JSON.
 */
import { createPublicKey, verify, constants, type KeyObject } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
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

interface VerificationKey {
  kid: string | null;
  key: KeyObject;
}

const ALGORITHMS: Readonly<Record<string, { hash: string; type: 'rsa' | 'rsa-pss' | 'ec' | 'ed'; }>> = {
  RS256: { hash: 'sha256', type: 'rsa' },
  RS384: { hash: 'sha384', type: 'rsa' },
  RS512: { hash: 'sha512', type: 'rsa' },
  PS256: { hash: 'sha256', type: 'rsa-pss' },
  PS384: { hash: 'sha384', type: 'rsa-pss' },
  PS512: { hash: 'sha512', type: 'rsa-pss' },
  ES256: { hash: 'sha256', type: 'ec' },
  ES384: { hash: 'sha384', type: 'ec' },
  ES512: { hash: 'sha512', type: 'ec' },
  EdDSA: { hash: '', type: 'ed' },
};

export function readVerificationKeys(file: string): VerificationKey[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`The OAUTHBEARER keys file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); check the path.`);
  }
  try {
    if (text.trimStart().startsWith('{')) {
      const jwks = JSON.parse(text) as { keys?: Array<Record<string, unknown>> };
      if (!Array.isArray(jwks.keys) || jwks.keys.length === 0) throw new Error('a JWKS document needs a non-empty "keys" list');
      return jwks.keys.map((jwk) => ({ kid: typeof jwk.kid === 'string' ? jwk.kid : null, key: createPublicKey({ key: jwk as never, format: 'jwk' }) }));
    }
    const blocks = text.match(/-----BEGIN [A-Z ]+-----[\s\S]+?-----END [A-Z ]+-----/g) ?? [];
    if (blocks.length === 0) throw new Error('no PEM block found');
    return blocks.map((pem) => ({ kid: null, key: createPublicKey(pem) }));
  } catch (e) {
    throw new Error(`The OAUTHBEARER keys file ${file} does not hold usable public keys: ${(e as Error).message}. Give PEM public keys or certificates, or a JWKS document.`);
  }
}

function keyFits(key: KeyObject, type: string): boolean {
  const kind = key.asymmetricKeyType;
  if (type === 'rsa') return kind === 'rsa';
  if (type === 'rsa-pss') return kind === 'rsa' || kind === 'rsa-pss';
  if (type === 'ec') return kind === 'ec';
  return kind === 'ed25519' || kind === 'ed448';
}

/** Why the token is refused, or its subject and expiry. */
export function checkToken(token: string, keys: readonly VerificationKey[], options: OAuthBearerOptions, nowMs: number): { sub: string; expMs: number } | string {
  const parts = token.split('.');
  if (parts.length !== 3) return 'the token is not a signed JWT (three dot-separated parts)';
  let header: { alg?: unknown; kid?: unknown };
  let claims: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as typeof header;
    claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return 'the token header or claims are not JSON';
  }
  const algorithm = typeof header.alg === 'string' ? ALGORITHMS[header.alg] : undefined;
  if (!algorithm) return `the token's algorithm ${JSON.stringify(header.alg)} is not accepted (unsecured tokens never are)`;
  const candidates = keys.filter((k) => (typeof header.kid !== 'string' || k.kid === null || k.kid === header.kid) && keyFits(k.key, algorithm.type));
  const data = Buffer.from(`${parts[0]}.${parts[1]}`);
  const signature = Buffer.from(parts[2]!, 'base64url');
  const verified = candidates.some(({ key }) => {
    try {
      if (algorithm.type === 'ed') return verify(null, data, key, signature);
      if (algorithm.type === 'ec') return verify(algorithm.hash, data, { key, dsaEncoding: 'ieee-p1363' }, signature);
      if (algorithm.type === 'rsa-pss') return verify(algorithm.hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }, signature);
      return verify(algorithm.hash, data, key, signature);
    } catch {
      return false;
    }
  });
  if (!verified) return 'the token signature does not verify against the configured keys';
  if (typeof claims.exp !== 'number') return 'the token has no exp claim';
  if (claims.exp * 1000 <= nowMs) return 'the token has expired';
  if (typeof claims.nbf === 'number' && claims.nbf * 1000 > nowMs) return 'the token is not valid yet (nbf)';
  if (typeof claims.sub !== 'string' || claims.sub === '') return 'the token has no sub claim';
  if (options.issuer !== undefined && claims.iss !== options.issuer) return 'the token was issued by another issuer';
  if (options.audience !== undefined) {
    const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!aud.includes(options.audience)) return 'the token is not meant for this audience';
  }
  return { sub: claims.sub, expMs: claims.exp * 1000 };
}

export class OAuthBearerKeys {
  private keys: VerificationKey[];
  private readonly reload = () => {
    try {
      this.keys = readVerificationKeys(this.options.keysFile);
      this.log?.info({ file: this.options.keysFile, keys: this.keys.length }, 'OAUTHBEARER keys reloaded');
    } catch (e) {
      this.log?.warn({ err: (e as Error).message }, 'OAUTHBEARER keys file changed but does not load; keeping the previous keys');
    }
  };

  constructor(
    readonly options: OAuthBearerOptions,
    private readonly log?: Logger,
  ) {
    this.keys = readVerificationKeys(options.keysFile);
  }

  get current(): readonly VerificationKey[] {
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
          const checked = checkToken(match[1]!, keys.current, keys.options, now());
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
