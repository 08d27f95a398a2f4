/**
 * The versioned, authenticated start of every RPC connection. Both ends hold
 * the same shared secret and prove it with a password-authenticated key
 * exchange (./pake.ts, SPAKE2): the client's Hello carries its masked value,
 * the server's Challenge its own and a confirmation keyed by the exchanged
 * key, the client's Auth its confirmation. Neither message lets a peer that
 * does not know the secret test guesses offline (version 1 sent an HMAC of
 * the secret to anyone who said hello, which a dictionary could be run
 * against); each wrong guess costs a connection, and the server logs it.
 * The client checks the server too, so a gateway never hands its calls to an
 * impostor.
 */
import { timingSafeEqual } from 'node:crypto';
import { METHOD_FINGERPRINT } from './methods.js';
import { ELEMENT_BYTES, PakeExchange, PakeSecret, type PakeRole } from './pake.js';

/** Bumped whenever frames, the handshake or the value encoding change incompatibly. */
export const RPC_VERSION = 2;
export const HELLO_MAGIC = Buffer.from('QRPC', 'ascii');
export const PAKE_VALUE_BYTES = ELEMENT_BYTES;
export const CONFIRMATION_BYTES = 32;

/** What both ends bind into the key: the protocol and the method list. */
const CONTEXT = Buffer.concat([Buffer.from(`queen-rpc v${RPC_VERSION}\n`), METHOD_FINGERPRINT]);

/** The secret's part of the exchange, computed once per process and secret. */
export function pakeSecret(secret: string): PakeSecret {
  return new PakeSecret(secret);
}

export function startExchange(role: PakeRole, secret: PakeSecret): PakeExchange {
  return new PakeExchange(role, secret, CONTEXT);
}

export function confirmationMatches(expected: Buffer, got: Buffer): boolean {
  return expected.length === got.length && timingSafeEqual(expected, got);
}

/** Why a peer's Hello cannot be served, as a sentence for the operator; null when it can. */
export function versionProblem(peerVersion: number, peerFingerprint: Buffer): string | null {
  if (peerVersion !== RPC_VERSION) {
    return `The gateway speaks queen RPC version ${peerVersion} and this core speaks version ${RPC_VERSION}: run the same queen-gateway release for the core and its gateways.`;
  }
  if (!peerFingerprint.equals(METHOD_FINGERPRINT)) {
    return `The gateway and this core speak queen RPC version ${RPC_VERSION} but were built with different core methods (${peerFingerprint.toString('hex')} against ${METHOD_FINGERPRINT.toString('hex')}): run the same queen-gateway release on both.`;
  }
  return null;
}
