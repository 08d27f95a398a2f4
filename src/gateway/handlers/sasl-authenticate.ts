// SaslAuthenticate: one SASL token from the client, one back, after a
// SaslHandshake v1 chose the mechanism (../sasl/authenticator.ts runs the
// exchange). A failure answers SASL_AUTHENTICATION_FAILED (58) with a message,
// then the connection closes.
//
// v1+: SessionLifetimeMs tells the client when its session ends, so it
// re-authenticates in time (KIP-368); 0 when sessions do not expire.
// On a listener without SASL the answer is ILLEGAL_SASL_STATE, as Kafka's.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { SaslAuthenticate } from '../../../protocol/messages/index.js';
import type { ApiHandler } from '../handler.js';

export const saslAuthenticate: ApiHandler<typeof SaslAuthenticate> = {
  api: SaslAuthenticate,
  versions: '0-2',
  async handle(request, ctx) {
    const sasl = ctx.connection.sasl;
    if (!sasl) {
      return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, errorMessage: 'This listener does not use SASL.', authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n };
    }
    return sasl.authenticate(request.authBytes, Date.now);
  },
};
