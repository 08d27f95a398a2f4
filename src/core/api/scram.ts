/** The Core interface (../core.ts), SCRAM credentials (rules: ../rules/scram-credentials.ts): requests and results, plain data. */

export const SCRAM_MECHANISMS = ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export type ScramMechanism = (typeof SCRAM_MECHANISMS)[number];

export interface ScramCredential {
  user: string;
  mechanism: ScramMechanism;
  iterations: number;
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
}

export interface ScramCredentialRef {
  user: string;
  mechanism: ScramMechanism;
}

export interface ScramUser {
  user: string;
  credentials: Array<{ mechanism: ScramMechanism; iterations: number }>;
}

export interface AlterScramCredentialsRequest {
  deletions: ScramCredentialRef[];
  upsertions: ScramCredential[];
}

/** Per deletion then per upsertion, in request order: null, or why nothing was done for it. */
export interface AlterScramCredentialsResult {
  results: Array<{ user: string; mechanism: ScramMechanism; error: 'not_found' | null }>;
}
