/**
 * A call as it goes out: its request (keyed for the core's ledger when the
 * method is, ./methods.ts), its deadline, whether it may be sent again on a
 * new connection, and its Call frame; then the call waiting for its answer.
 */
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { CoreError } from '../core/errors.js';
import { FrameKind, frameWriter, sealFrame } from './frames.js';
import { METHOD_NAMES, traitsOf, type MethodName } from './methods.js';

/** A call waiting for its answer. */
export interface PendingCall {
  method: MethodName;
  frame: Buffer[];
  retrySafe: boolean;
  longPoll: boolean;
  /** The connection the call went out on; null while it waits for one. */
  sentOn: Socket | null;
  /** When the call was made (performance.now()), for its round trip's meter. */
  madeAt: number;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  cleanup(): void;
}

export const MAX_CALL_ID = 0xffffffff;

export interface OutgoingCall {
  frame: Buffer[];
  /** 0: no deadline (a call that holds as long as it must, JoinGroup and SyncGroup). */
  deadlineMs: number;
  retrySafe: boolean;
  longPoll: boolean;
}

/** The call `id` of `method` with `given`; a request the frame cannot carry is an invalid_argument CoreError. */
export function outgoingCall(id: number, method: MethodName, given: unknown, callTimeoutMs: number): OutgoingCall {
  const traits = traitsOf(method);
  const request = traits.keyed ? traits.keyed(given as never, randomUUID) : given;
  const holds = traits.holds ? traits.holds(request as never) : 0;
  const deadlineMs = holds === null ? 0 : Math.min(callTimeoutMs + Math.max(0, holds), MAX_CALL_ID);
  const retrySafe = typeof traits.retrySafe === 'function' ? traits.retrySafe(request as never) : traits.retrySafe === true;
  try {
    const w = frameWriter(FrameKind.Call);
    w.uint32(id);
    w.uint16(METHOD_NAMES.indexOf(method));
    w.uint32(deadlineMs);
    w.value(request);
    return { frame: sealFrame(w), deadlineMs, retrySafe, longPoll: traits.holds !== undefined };
  } catch (e) {
    throw new CoreError('invalid_argument', `The ${method} request cannot be sent to the core: ${(e as Error).message}`);
  }
}
