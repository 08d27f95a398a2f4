// SaslHandshake: the client names the SASL mechanism it will authenticate
// with; the answer lists the enabled ones. The state machine is the
// connection's (../sasl/authenticator.ts).
//
// On a listener without SASL (PLAINTEXT, SSL) the answer is
// ILLEGAL_SASL_STATE, as Kafka's. An unknown mechanism gets
// UNSUPPORTED_SASL_MECHANISM with the list, then the connection closes.
// v0: the tokens that follow are bare size-prefixed frames; v1: each comes
// in a SaslAuthenticate request.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { SaslHandshake } from '../../../protocol/messages/index.js';
import type { ApiHandler } from '../handler.js';

export const saslHandshake: ApiHandler<typeof SaslHandshake> = {
  api: SaslHandshake,
  versions: '0-1',
  async handle(request, ctx) {
    const sasl = ctx.connection.sasl;
    if (!sasl) return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] };
    return sasl.handshake(request.mechanism, ctx.header.apiVersion);
  },
};
