/**
 * Builds the SASL settings a gateway's SASL listeners share from what the
 * operator configured: which mechanisms, where PLAIN's passwords are checked,
 * how long sessions last.
 */
import type { Logger } from 'pino';
import { type Core, SCRAM_MECHANISMS } from '../../core/index.js';
import type { SaslSettings } from './authenticator.js';
import type { SaslMechanism } from './mechanism.js';
import { OAuthBearerKeys, oauthBearerMechanism, type OAuthBearerOptions } from './oauthbearer.js';
import { plainMechanism, type PasswordCheck } from './plain.js';
import { passwordMatches, scramMechanism } from './scram.js';
import { PlainUsersFile } from './users-file.js';

export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const;
export type SaslMechanismName = (typeof SASL_MECHANISMS)[number];

export interface SaslOptions {
  /** Offered in this order. Default PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (and OAUTHBEARER when keys are configured). */
  mechanisms?: readonly SaslMechanismName[];
  /**
   * PLAIN users from a `name=password` file (./users-file.ts). PLAIN checks
   * this file first and then the SCRAM store in the core (a user made with
   * AlterUserScramCredentials logs in with PLAIN too, by the same password).
   */
  plainUsersFile?: string;
  /** Kafka's connections.max.reauth.ms; 0 (default) = sessions last as long as the connection. */
  maxReauthMs?: number;
  /** OAUTHBEARER: the keys JWTs must be signed with, and the audience and issuer they must name. */
  oauthbearer?: OAuthBearerOptions;
}

export interface BuiltSasl {
  settings: SaslSettings;
  /** PLAIN's check of a name and password (users file, then SCRAM store), for the HTTP API's Basic authentication. */
  checkPassword: PasswordCheck;
  /** Stops watching files. */
  close(): void;
}

export const DEFAULT_SASL_MECHANISMS: readonly SaslMechanismName[] = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'];

export function buildSasl(options: SaslOptions, core: Pick<Core, 'scramCredential'>, log?: Logger): BuiltSasl {
  const names = options.mechanisms ?? [...DEFAULT_SASL_MECHANISMS, ...(options.oauthbearer ? (['OAUTHBEARER'] as const) : [])];
  const closers: Array<() => void> = [];
  const usersFile = options.plainUsersFile === undefined ? null : new PlainUsersFile(options.plainUsersFile, log);
  if (usersFile) closers.push(usersFile.watch());
  const checkPassword: PasswordCheck = async (user, password) => {
    if (usersFile?.has(user)) return usersFile.check(user, password);
    for (const mechanism of SCRAM_MECHANISMS) {
      const credential = await core.scramCredential({ user, mechanism });
      if (credential) return passwordMatches(credential, password);
    }
    return false;
  };
  const mechanisms = new Map<string, SaslMechanism>();
  for (const name of names) {
    if (mechanisms.has(name)) throw new Error(`The SASL mechanism ${name} is listed twice.`);
    switch (name) {
      case 'PLAIN':
        mechanisms.set(name, plainMechanism(checkPassword));
        break;
      case 'SCRAM-SHA-256':
      case 'SCRAM-SHA-512':
        mechanisms.set(name, scramMechanism(name, core));
        break;
      case 'OAUTHBEARER': {
        if (!options.oauthbearer) throw new Error('SASL OAUTHBEARER needs the keys tokens are signed with: give a PEM or JWKS file (--sasl-oauthbearer-keys-file).');
        const keys = new OAuthBearerKeys(options.oauthbearer, log);
        closers.push(keys.watch());
        mechanisms.set(name, oauthBearerMechanism(keys));
        break;
      }
      default:
        throw new Error(`The SASL mechanism ${name} is not available yet.`);
    }
  }
  return {
    settings: { mechanisms, maxReauthMs: options.maxReauthMs ?? 0 },
    checkPassword,
    close: () => closers.forEach((c) => c()),
  };
}
