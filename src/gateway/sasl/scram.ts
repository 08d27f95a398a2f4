/**
 * SASL SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) against the
 * credentials in the core (rules/scram-credentials.ts):
 *
 *   client-first  n,,n=alice,r=<client nonce>
 *   server-first  r=<client nonce><server nonce>,s=<salt>,i=<iterations>
 *   client-final  c=biws,r=<nonce>,p=<proof>
 *   server-final  v=<server signature>
 *
 * The server checks the proof with StoredKey (it never sees the password),
 * then proves itself with ServerKey. A user without a credential gets a
 * made-up salt and the usual count and fails at the proof, like a wrong
 * password, so the exchange does not tell which users exist (Kafka refuses
 * an unknown user at the first message; the code and message are the same).
 * Channel binding is not offered (Kafka offers none either).
 *
 * Passwords, where this side sees one (a credential made here from a
 * password, PLAIN checked against the SCRAM store), are prepared with
 * SASLprep (RFC 4013), RFC 5802's Normalize, by @mongodb-js/saslprep, the
 * maintained implementation the MongoDB driver uses (docs/security-libraries.md).
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { saslprep } from '@mongodb-js/saslprep';
import { type Core, MIN_SCRAM_ITERATIONS, SCRAM_KEY_BYTES, type ScramCredential, type ScramMechanism } from '../../core/index.js';
import type { SaslExchange, SaslMechanism, SaslStep } from './mechanism.js';

const pbkdf2Async = promisify(pbkdf2);

const HASH: Readonly<Record<ScramMechanism, 'sha256' | 'sha512'>> = { 'SCRAM-SHA-256': 'sha256', 'SCRAM-SHA-512': 'sha512' };

/** RFC 5802's Normalize(password): SASLprep, as a stored string (unassigned code points refused); throws a sentence when the password cannot be prepared. */
export function preparedPassword(password: string): string {
  try {
    return saslprep(password);
  } catch (e) {
    throw new Error(`This password cannot be prepared as SASLprep (RFC 4013) requires (${(e as Error).message}); choose one without control, private-use or unassigned characters.`);
  }
}

async function saltedPassword(mechanism: ScramMechanism, password: string, salt: Buffer, iterations: number): Promise<Buffer> {
  return pbkdf2Async(password, salt, iterations, SCRAM_KEY_BYTES[mechanism], HASH[mechanism]);
}

/** The keys the core keeps, derived from a password as RFC 5802 section 3 does (the password SASLprepped). */
export async function scramKeysFromPassword(mechanism: ScramMechanism, password: string, salt: Buffer, iterations: number): Promise<{ storedKey: Buffer; serverKey: Buffer }> {
  return scramKeysFromSaltedPassword(mechanism, await saltedPassword(mechanism, preparedPassword(password), salt, iterations));
}

/** StoredKey and ServerKey from a SaltedPassword (what AlterUserScramCredentials carries). */
export function scramKeysFromSaltedPassword(mechanism: ScramMechanism, salted: Buffer): { storedKey: Buffer; serverKey: Buffer } {
  const hash = HASH[mechanism];
  const clientKey = createHmac(hash, salted).update('Client Key').digest();
  return { storedKey: createHash(hash).update(clientKey).digest(), serverKey: createHmac(hash, salted).update('Server Key').digest() };
}

/**
 * Whether `password` yields the credential's StoredKey: how PLAIN checks a
 * password against the SCRAM store. Its SASLprep form (RFC 5802; what a
 * credential made here holds), then the password as typed: Kafka's own tools
 * (kafka-configs.sh, the admin clients' AlterUserScramCredentials), kafkajs
 * and librdkafka hash the UTF-8 bytes unprepared, so a user made with them
 * logs in with PLAIN by the same password even where SASLprep would change it.
 */
export async function passwordMatches(credential: ScramCredential, password: string): Promise<boolean> {
  const forms = new Set<string>();
  try {
    forms.add(saslprep(password, { allowUnassigned: true })); // a query string: unassigned code points pass (RFC 3454 section 7)
  } catch {
    // prohibited characters: only the password as typed can match
  }
  forms.add(password);
  for (const form of forms) {
    const { storedKey } = scramKeysFromSaltedPassword(credential.mechanism, await saltedPassword(credential.mechanism, form, credential.salt, credential.iterations));
    if (timingSafeEqual(storedKey, credential.storedKey)) return true;
  }
  return false;
}

/** Per process: made-up salts for unknown users are stable within a run, so two tries do not tell them apart from a real user. */
const DECOY_SECRET = randomBytes(32);

const FAILED = (mechanism: string) => `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism}`;

export function scramMechanism(mechanism: ScramMechanism, core: Pick<Core, 'scramCredential'>): SaslMechanism {
  return { name: mechanism, start: () => new ScramExchange(mechanism, core) };
}

class ScramExchange implements SaslExchange {
  private stage: 'first' | 'final' | 'done' = 'first';
  private user: string | null = null;
  private credential: ScramCredential | null = null;
  private nonce = '';
  private clientFirstBare = '';
  private serverFirst = '';

  constructor(
    private readonly mechanism: ScramMechanism,
    private readonly core: Pick<Core, 'scramCredential'>,
  ) {}

  async step(token: Buffer): Promise<SaslStep> {
    if (this.stage === 'first') return this.first(token.toString('utf8'));
    if (this.stage === 'final') return this.final(token.toString('utf8'));
    return this.refuse('the SCRAM exchange had already finished');
  }

  private refuse(why: string | null): SaslStep {
    this.stage = 'done';
    return { kind: 'failed', message: why === null ? FAILED(this.mechanism) : `Authentication failed: ${why}`, user: this.user };
  }

  private async first(message: string): Promise<SaslStep> {
    // gs2-header: "n,," (no channel binding) or "y,," (client could but thinks we cannot); "p=" asks for binding we do not offer.
    const match = /^([ny]),(?:a=[^,]*)?,(n=([^,]*),r=([^,]+)(?:,.*)?)$/s.exec(message);
    if (!match) return this.refuse(message.startsWith('p=') ? 'channel binding is not supported' : 'the SCRAM client-first message is malformed');
    const user = decodeSaslName(match[3]!);
    if (user === null || user === '') return this.refuse('the SCRAM user name is malformed');
    this.user = user;
    // Extensions (Kafka's tokenauth for delegation tokens) are not served: delegation tokens do not exist here.
    if (/,tokenauth=true(,|$)/.test(match[2]!)) return this.refuse('delegation tokens are not supported');
    this.clientFirstBare = match[2]!;
    this.credential = await this.core.scramCredential({ user, mechanism: this.mechanism });
    const salt = this.credential?.salt ?? createHmac('sha256', DECOY_SECRET).update(`${this.mechanism}\0${user}`).digest();
    const iterations = this.credential?.iterations ?? MIN_SCRAM_ITERATIONS;
    this.nonce = match[4]! + randomBytes(24).toString('base64url');
    this.serverFirst = `r=${this.nonce},s=${salt.toString('base64')},i=${iterations}`;
    this.stage = 'final';
    return { kind: 'challenge', bytes: Buffer.from(this.serverFirst, 'utf8') };
  }

  private final(message: string): SaslStep {
    this.stage = 'done';
    const match = /^(c=([^,]*),r=([^,]*)(?:,[^p][^,]*)*),p=([^,]+)$/s.exec(message);
    if (!match) return this.refuse('the SCRAM client-final message is malformed');
    const [, withoutProof, channelBinding, nonce, proofText] = match as unknown as [string, string, string, string, string];
    // Kafka checks that the nonce ends with the server's, not that it equals it: older librdkafka
    // builds (kcat's among them) send the client nonce once more in front, and Kafka serves them.
    if (!nonce.endsWith(this.nonce)) return this.refuse('the SCRAM nonce does not match');
    if (channelBinding !== 'biws' && channelBinding !== 'eSws') return this.refuse('channel binding is not supported');
    const credential = this.credential;
    if (!credential) return this.refuse(null);
    const hash = HASH[this.mechanism];
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const proof = Buffer.from(proofText, 'base64');
    const signature = createHmac(hash, credential.storedKey).update(authMessage).digest();
    if (proof.length !== signature.length) return this.refuse(null);
    const clientKey = Buffer.alloc(signature.length);
    for (let i = 0; i < signature.length; i++) clientKey[i] = proof[i]! ^ signature[i]!;
    if (!timingSafeEqual(createHash(hash).update(clientKey).digest(), credential.storedKey)) return this.refuse(null);
    const serverSignature = createHmac(hash, credential.serverKey).update(authMessage).digest('base64');
    return { kind: 'done', user: credential.user, bytes: Buffer.from(`v=${serverSignature}`, 'utf8') };
  }
}

/** RFC 5802 saslname: "=2C" is ',' and "=3D" is '='; any other '=' is malformed. */
function decodeSaslName(name: string): string | null {
  if (/=(?!2C|3D)/.test(name)) return null;
  return name.replace(/=2C/g, ',').replace(/=3D/g, '=');
}
