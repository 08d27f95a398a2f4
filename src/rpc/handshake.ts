/**
 * The versioned, authenticated start of every RPC connection. Both ends hold
 * the same shared secret and prove it without sending it: each proves with an
 * HMAC-SHA256 over both sides' fresh nonces, labelled by role so one side's
 * proof can never be replayed as the other's. The client checks the server
 * too, so a gateway never hands its calls to an impostor.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { METHOD_FINGERPRINT } from './methods.js';

/** Bumped whenever frames or the value encoding change incompatibly. */
export const RPC_VERSION = 1;
export const HELLO_MAGIC = Buffer.from('QRPC', 'ascii');
export const NONCE_BYTES = 32;

export function newNonce(): Buffer {
  return randomBytes(NONCE_BYTES);
}

export function proof(secret: string, role: 'client' | 'server', clientNonce: Buffer, serverNonce: Buffer): Buffer {
  return createHmac('sha256', secret).update(`queen-rpc ${role} v${RPC_VERSION}\n`).update(clientNonce).update(serverNonce).digest();
}

export function proofMatches(expected: Buffer, got: Buffer): boolean {
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
