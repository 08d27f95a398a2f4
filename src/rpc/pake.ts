/**
 * SPAKE2 (RFC 9382's construction) over the 2048-bit MODP group of RFC 3526:
 * a password-authenticated key exchange. Both ends hold the same RPC secret;
 * each sends one masked Diffie-Hellman value, and each derives the same key
 * only if both used the same secret. What travels lets no one test secrets
 * offline: a peer that does not know the secret learns whether one guess was
 * right per connection it opens (and each such failure is logged), never a
 * value it could run a dictionary against. The key-confirmation MACs that
 * follow are keyed by the exchanged key, so they are no oracle either.
 *
 * Exponents are 256 bits (ample against a 2048-bit group, as RFC 7919
 * advises), so the exchange costs a few milliseconds per connection. This
 * arithmetic is not constant-time, so nothing derived from the secret is
 * computed per connection: M^w and N^w are computed once per secret and
 * kept (PakeSecret); only fresh per-connection exponents run per exchange.
 */
import { createHash, createHmac, getDiffieHellman, randomBytes } from 'node:crypto';

const GROUP = getDiffieHellman('modp14');
const P_BYTES = GROUP.getPrime();
const P = toBigInt(P_BYTES);
/** The subgroup's order: p is a safe prime, p = 2q + 1. */
const Q = (P - 1n) / 2n;
export const ELEMENT_BYTES = P_BYTES.length;
const EXPONENT_BYTES = 32;

function toBigInt(bytes: Buffer): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${bytes.toString('hex')}`);
}

function toBytes(n: bigint): Buffer {
  return Buffer.from(n.toString(16).padStart(ELEMENT_BYTES * 2, '0'), 'hex');
}

/** base^exponent mod p (square and multiply; the exponents are 256 bits, so this takes about a millisecond). */
function power(base: bigint, exponent: Buffer): bigint {
  let result = 1n;
  let square = base % P;
  for (let e = toBigInt(exponent); e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * square) % P;
    square = (square * square) % P;
  }
  return result;
}

function inverse(a: bigint): bigint {
  // Extended Euclid; p is prime and 0 < a < p.
  let [r0, r1, s0, s1] = [P, a % P, 0n, 1n];
  while (r1 !== 0n) {
    const quotient = r0 / r1;
    [r0, r1] = [r1, r0 - quotient * r1];
    [s0, s1] = [s1, s0 - quotient * s1];
  }
  return ((s0 % P) + P) % P;
}

/** A group element nobody knows the discrete log of: a hash, squared into the order-q subgroup. */
function elementFromLabel(label: string): bigint {
  const blocks: Buffer[] = [];
  for (let i = 0; blocks.length * 64 < ELEMENT_BYTES + 32; i++) blocks.push(createHash('sha512').update(`${label} ${i}`).digest());
  const seed = toBigInt(Buffer.concat(blocks)) % P;
  return (seed * seed) % P;
}

const M = elementFromLabel('queen-rpc spake2 M');
const N = elementFromLabel('queen-rpc spake2 N');

/** The secret as an exponent. */
function secretExponent(secret: string): Buffer {
  return createHash('sha256').update('queen-rpc spake2 w\n').update(secret, 'utf8').digest();
}

export type PakeRole = 'client' | 'server';

export interface PakeKeys {
  /** The MAC this side sends to prove it derived the key. */
  ownConfirmation: Buffer;
  /** The MAC the other side must send. */
  peerConfirmation: Buffer;
}

/** What the secret contributes, computed once per secret (see above). */
export class PakeSecret {
  readonly w: Buffer;
  /** M^w and N^w. */
  readonly masks: Readonly<Record<'M' | 'N', bigint>>;
  /** Their inverses, which unmask the peer's value. */
  readonly unmasks: Readonly<Record<'M' | 'N', bigint>>;

  constructor(secret: string) {
    this.w = secretExponent(secret);
    const m = power(M, this.w);
    const n = power(N, this.w);
    this.masks = { M: m, N: n };
    this.unmasks = { M: inverse(m), N: inverse(n) };
  }
}

/** One side of one exchange. `message` goes to the peer; `finish` takes the peer's. */
export class PakeExchange {
  private readonly exponent = randomBytes(EXPONENT_BYTES);
  readonly message: Buffer;

  constructor(
    private readonly role: PakeRole,
    private readonly secret: PakeSecret,
    /** Bound into the key: the protocol version and method fingerprint both ends announced. */
    private readonly context: Buffer,
  ) {
    this.message = toBytes((power(2n, this.exponent) * secret.masks[role === 'client' ? 'M' : 'N']) % P);
  }

  /** Derives the confirmations from the peer's message; throws when it is no group element. */
  finish(peerMessage: Buffer): PakeKeys {
    if (peerMessage.length !== ELEMENT_BYTES) throw new Error(`the peer's key-exchange value is ${peerMessage.length} bytes, not ${ELEMENT_BYTES}`);
    const peer = toBigInt(peerMessage);
    if (peer <= 1n || peer >= P - 1n) throw new Error("the peer's key-exchange value is not a usable group element");
    const unmasked = (peer * this.secret.unmasks[this.role === 'client' ? 'N' : 'M']) % P;
    const shared = toBytes(power(unmasked, this.exponent));
    const [clientMessage, serverMessage] = this.role === 'client' ? [this.message, peerMessage] : [peerMessage, this.message];
    const key = createHash('sha256').update('queen-rpc spake2 key\n').update(this.context).update(clientMessage).update(serverMessage).update(shared).update(this.secret.w).digest();
    const confirm = (role: PakeRole) => createHmac('sha256', key).update(`queen-rpc ${role} confirms\n`).update(clientMessage).update(serverMessage).digest();
    return { ownConfirmation: confirm(this.role), peerConfirmation: confirm(this.role === 'client' ? 'server' : 'client') };
  }
}

// Q documents the group; the subgroup check is the bounds test above (a safe
// prime leaves only the order-2 element besides, which an attacker gains one
// bit of a one-time exponent from).
void Q;
