/**
 * The RPC secret as standard TLS: TLS 1.2 with a pre-shared key (RFC 4279),
 * key exchange ECDHE_PSK (RFC 5489), cipher suite
 * ECDHE-PSK-CHACHA20-POLY1305 (RFC 7905), all done by node:tls (OpenSSL).
 * Both ends derive the same key from --rpc-secret; a peer with another
 * secret fails the TLS handshake (its Finished does not decrypt), so the
 * secret itself, or anything a guess could be checked against, never
 * crosses in clear.
 *
 * Why these choices (Node 20 offers PSK in TLS 1.2 and 1.3):
 * - Not TLS 1.3: its external PSKs put a binder in the ClientHello, an HMAC
 *   keyed by the PSK alone, in clear: one recorded connection lets anyone
 *   test guesses of the secret offline. In TLS 1.2 the messages keyed by the
 *   PSK (the Finished pair) travel after ChangeCipherSpec, under keys that
 *   also need the ephemeral ECDH secret, so a recording is no oracle.
 * - ECDHE_PSK, not plain PSK: forward secrecy, and the point above.
 * - CHACHA20-POLY1305: the one AEAD suite OpenSSL has for ECDHE_PSK (it has
 *   no RFC 8442 AES-GCM ones).
 * - scrypt, not HKDF, for the key: HKDF is for keys that are already random
 *   (RFC 5869 says so); the secret is a string an operator chose. A party
 *   that takes the core's address (an impostor core) completes the ECDH with
 *   a gateway and gets its Finished, which it can test guesses against; a
 *   memory-hard KDF (RFC 7914; N = 2^15, r = 8, p = 1: 32 MiB and a
 *   fraction of a second a guess) makes that slow, and a random secret makes it
 *   hopeless. The key is derived once per process and secret.
 *
 * The derivation and the identity never change between releases, so a
 * gateway of another release still completes TLS and hears, inside it, that
 * its RPC version differs (./handshake.ts).
 */
import { constants, scryptSync } from 'node:crypto';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { connect as tlsConnect, createSecureContext, TLSSocket, type SecureContext, type TlsOptions, type TLSSocketOptions } from 'node:tls';
import { FrameKind, HANDSHAKE_MAX_FRAME_BYTES, rpcFrameSplitter } from './frames.js';

const PSK_TLS = { ciphers: 'ECDHE-PSK-CHACHA20-POLY1305', minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' } as const;
/** Who the client says it is (sent in clear; identifies the protocol, not the gateway). */
const IDENTITY = 'queen-rpc';
const KDF_SALT = 'queen-rpc tls-psk';
const KDF_COST = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/** The first byte of a TLS handshake record: how the core tells a TLS-PSK start from a queen RPC frame. */
const TLS_HANDSHAKE_RECORD = 0x16;

const derived = new Map<string, Buffer>();

/** The 32-byte TLS key both ends derive from the RPC secret (memoized: scrypt is slow on purpose). */
export function preSharedKey(secret: string): Buffer {
  let key = derived.get(secret);
  if (key === undefined) {
    key = scryptSync(secret, KDF_SALT, 32, KDF_COST);
    derived.set(secret, key);
  }
  return key;
}

let serverContext: SecureContext | undefined;

/** The core's side: TLS-PSK over `base` (a TCP socket, or the mutual-TLS session when both are configured). */
export function pskServerSocket(base: Duplex, key: Buffer): TLSSocket {
  // No session tickets: gateways keep their connections and never resume one.
  serverContext ??= createSecureContext({ ...PSK_TLS, secureOptions: constants.SSL_OP_NO_TICKET });
  // Node takes the server's PSK options on a TLSSocket too; its typings list them only for tls.Server.
  const options: TLSSocketOptions & Pick<TlsOptions, 'pskCallback' | 'pskIdentityHint'> = { isServer: true, secureContext: serverContext, pskCallback: () => key, pskIdentityHint: IDENTITY };
  return new TLSSocket(base, options);
}

/** The gateway's side. There is no certificate: the key authenticates the core, so the host-name check is off. */
export function pskClientSocket(base: Duplex, key: Buffer): TLSSocket {
  return tlsConnect({ socket: base, ...PSK_TLS, pskCallback: () => ({ psk: key, identity: IDENTITY }), checkServerIdentity: () => undefined });
}

export interface PskClientEvents {
  /** TLS-PSK is up: the RPC speaks on the socket. */
  established(): void;
  /** The core answered the start of TLS-PSK with a Refused frame (its body): it refused the certificate, or takes no secret. */
  refused(body: Buffer): void;
  /** The handshake failed otherwise; isSecretMismatch tells a wrong secret. */
  failed(error: NodeJS.ErrnoException): void;
}

/**
 * The gateway's TLS-PSK over `base` (TCP, or the certificate's session),
 * reporting how the handshake ended. Over a certificate's session the core
 * may answer with a Refused frame instead of TLS; Node would chain the two
 * TLS layers natively, out of sight, so what the core sends before TLS-PSK
 * is up (at most a handshake frame of it) is read through a relay.
 */
export function securedConnection(base: Socket, key: Buffer, events: PskClientEvents): TLSSocket {
  const before: Buffer[] = [];
  let [established, kept] = [false, 0];
  const keep = (chunk: Buffer) => {
    if (established || kept >= HANDSHAKE_MAX_FRAME_BYTES) return;
    before.push(chunk);
    kept += chunk.length;
  };
  const secured = pskClientSocket(base instanceof TLSSocket ? watchedStream(base, keep) : base, key);
  secured.once('secureConnect', () => {
    established = true;
    events.established();
  });
  secured.on('error', (e: NodeJS.ErrnoException) => {
    if (established) return;
    let refusal: Buffer | null = null;
    try {
      rpcFrameSplitter((kind, body) => {
        if (kind === FrameKind.Refused) refusal ??= body;
      }).push(Buffer.concat(before));
    } catch {
      // not queen frames
    }
    if (refusal) events.refused(refusal);
    else events.failed(e);
  });
  return secured;
}

/** `base` behind a plain stream that shows each chunk to `seen` first. */
function watchedStream(base: Duplex, seen: (chunk: Buffer) => void): Duplex {
  const relay = new Duplex({
    read: () => void base.resume(),
    write: (chunk: Buffer, _encoding, done) => void base.write(chunk, done),
    final: (done) => void base.end(done),
    destroy: (error, done) => {
      base.destroy(error ?? undefined);
      done(error);
    },
  });
  base.on('data', (chunk: Buffer) => {
    seen(chunk);
    if (!relay.push(chunk)) base.pause();
  });
  base.once('end', () => relay.push(null));
  base.once('close', () => relay.destroy());
  return relay;
}

/** Whether a connection's first bytes start TLS (a gateway with the secret) rather than a queen RPC frame. */
export function startsTls(firstChunk: Buffer): boolean {
  return firstChunk[0] === TLS_HANDSHAKE_RECORD;
}

/**
 * Whether a failed TLS-PSK handshake means the two ends hold different
 * secrets: the side that received the other's Finished could not decrypt it
 * (OpenSSL's "decryption failed or bad record mac"), and the other side hears
 * that as a bad_record_mac alert.
 */
export function isSecretMismatch(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC' || code === 'ERR_SSL_SSLV3_ALERT_BAD_RECORD_MAC';
}
