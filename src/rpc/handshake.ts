/**
 * The versioned start of every RPC connection. Authentication happens below
 * it, in TLS: the shared secret as TLS with a pre-shared key (./psk.ts), a
 * client certificate as mutual TLS, or both, one inside the other. Inside
 * that channel the gateway says hello (the magic, its RPC version and the
 * fingerprint of its method list) and the core answers Ready or Refused with
 * a sentence, so a gateway of another release is told so instead of
 * misreading calls.
 */
import type { Socket } from 'node:net';
import { FrameKind, frameWriter, sendFrame } from './frames.js';
import { METHOD_FINGERPRINT } from './methods.js';

/** Bumped whenever frames, the handshake or the value encoding change incompatibly. */
export const RPC_VERSION = 3;
export const HELLO_MAGIC = Buffer.from('QRPC', 'ascii');

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

/** The gateway's hello: the magic, its RPC version, the fingerprint of its method list. */
export function sendHello(socket: Socket): void {
  const w = frameWriter(FrameKind.Hello);
  w.raw(HELLO_MAGIC);
  w.uint16(RPC_VERSION);
  w.raw(METHOD_FINGERPRINT);
  sendFrame(socket, w);
}
