/**
 * The RPC's framing. Every frame is
 *
 *   u32 length (of what follows) | u8 kind | body
 *
 * Handshake (once per connection, client first, inside TLS: see ./handshake.ts):
 *   Hello      'QRPC' | u16 version | 8-byte method fingerprint
 *   Ready      (empty)
 *   Refused    u8 reason (1 version, 2 authentication: the secret or the certificate) | UTF-8 sentence saying why; the server closes after it
 *   (kinds 2 and 3 were version 2's key exchange, before the secret moved into TLS)
 *
 * Calls (after Ready; any number in flight, answered in any order):
 *   Call       u32 call id | u16 method | u32 deadline ms (0 = none) | value
 *   Reply      u32 call id | value
 *   Failure    u32 call id | value { code, message, core }
 *   Cancel     u32 call id        (the caller went away: abort the core call)
 */
import type { Socket } from 'node:net';
import { FrameSplitter } from '../../protocol/frame-splitter.js';
import { ValueWriter } from './values.js';

export const FrameKind = {
  Hello: 1,
  Ready: 4,
  Refused: 5,
  Call: 16,
  Reply: 17,
  Failure: 18,
  Cancel: 19,
} as const;

export type FrameKindCode = (typeof FrameKind)[keyof typeof FrameKind];

export const DEFAULT_MAX_FRAME_BYTES = 256 * 1024 * 1024;
/** The largest handshake frame (a Refused sentence); anything bigger before Ready is not this protocol. */
export const HANDSHAKE_MAX_FRAME_BYTES = 4096;

/** Starts a frame of `kind`; the caller writes the body, then `sendFrame` prefixes the length. */
export function frameWriter(kind: FrameKindCode): ValueWriter {
  const w = new ValueWriter();
  w.uint32(0); // the length, filled in by sendFrame
  w.uint8(kind);
  return w;
}

/** Finishes a frame: its bytes, length prefix filled in, ready to be written (again, after a reconnect). */
export function sealFrame(w: ValueWriter): Buffer[] {
  const { parts, length } = w.finish();
  parts[0]!.writeUInt32BE(length - 4, 0);
  return parts;
}

/** Writes a sealed frame to the socket as one corked burst. */
export function writeFrame(socket: Socket, parts: Buffer[]): void {
  if (parts.length === 1) {
    socket.write(parts[0]!);
    return;
  }
  socket.cork();
  for (const part of parts) socket.write(part);
  socket.uncork();
}

export function sendFrame(socket: Socket, w: ValueWriter): void {
  writeFrame(socket, sealFrame(w));
}

export const RefusedReason = { Version: 1, Authentication: 2 } as const;

/**
 * Splits a byte stream into RPC frames with the splitter the Kafka side uses
 * (protocol/frame-splitter.ts), handing each out as its kind and body. A frame
 * holds at least its kind byte. The limit starts at the handshake's: before
 * Ready, no peer may make this side buffer more than a handshake frame; the
 * caller raises `maxFrameBytes` once the peer has authenticated.
 */
export function rpcFrameSplitter(onFrame: (kind: number, body: Buffer) => void): FrameSplitter {
  return new FrameSplitter(HANDSHAKE_MAX_FRAME_BYTES, (frame) => onFrame(frame[0]!, frame.subarray(1)), { minFrameBytes: 1 });
}
