/**
 * Failures of the hop itself, as opposed to the core's own CoreErrors (which
 * cross the RPC unchanged). Not a CoreError on purpose: the gateway treats an
 * error it cannot map as a dead connection, which is what a lost core is.
 */
export type RpcErrorCode =
  | 'unavailable'        // no connection to the core within the call's deadline
  | 'connection_lost'    // the connection dropped before the answer; the call may or may not have taken effect
  | 'deadline_exceeded'  // no answer within the deadline; the call may or may not have taken effect
  | 'version_mismatch'   // the core and the gateway come from different releases
  | 'unauthenticated'    // the shared secrets differ
  | 'cancelled'          // the caller aborted before the call was sent
  | 'remote_failure'     // the core failed with something other than a CoreError
  | 'protocol';          // the peer sent bytes that are not this protocol

export class RpcError extends Error {
  override readonly name = 'RpcError';
  readonly code: RpcErrorCode;

  constructor(code: RpcErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export function isRpcError(e: unknown): e is RpcError {
  return e instanceof Error && e.name === 'RpcError' && typeof (e as RpcError).code === 'string';
}
