/**
 * SASL PLAIN (RFC 4616): one message, `authzid NUL authcid NUL password`.
 * As Kafka's PlainServer: an authorization id, when given, must equal the
 * user name; the password is checked by the configured verifier (the SCRAM
 * store, a users file, or both; see ./credentials.ts).
 */
import { INVALID_CREDENTIALS, type SaslMechanism, type SaslStep } from './mechanism.js';

/** Whether `password` is the password of `user`. Never throws for a wrong or unknown user. */
export type PasswordCheck = (user: string, password: string) => Promise<boolean>;

export function plainMechanism(checkPassword: PasswordCheck): SaslMechanism {
  return {
    name: 'PLAIN',
    start: () => ({
      async step(token: Buffer): Promise<SaslStep> {
        const parts = token.toString('utf8').split('\u0000');
        if (parts.length !== 3) {
          return { kind: 'failed', message: 'Authentication failed: the PLAIN message must be authzid NUL user NUL password', user: null };
        }
        const [authzid, user, password] = parts as [string, string, string];
        if (user === '') return { kind: 'failed', message: 'Authentication failed: username not specified', user: null };
        if (password === '') return { kind: 'failed', message: 'Authentication failed: password not specified', user };
        if (authzid !== '' && authzid !== user) {
          return { kind: 'failed', message: 'Authentication failed: Client requested an authorization id that is different from username', user };
        }
        if (!(await checkPassword(user, password))) return { kind: 'failed', message: INVALID_CREDENTIALS, user };
        return { kind: 'done', user, bytes: Buffer.alloc(0) };
      },
    }),
  };
}
