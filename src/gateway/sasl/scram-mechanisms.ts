// Kafka's numbering of SCRAM mechanisms in DescribeUserScramCredentials and
// AlterUserScramCredentials (ScramMechanism.type): 0 unknown, 1 SHA-256, 2 SHA-512.
import type { ScramMechanism } from '../../core/index.js';

const BY_TYPE: ReadonlyMap<number, ScramMechanism> = new Map([
  [1, 'SCRAM-SHA-256'],
  [2, 'SCRAM-SHA-512'],
]);

export function scramMechanismOf(type: number): ScramMechanism | null {
  return BY_TYPE.get(type) ?? null;
}

export function scramTypeOf(mechanism: ScramMechanism): number {
  return mechanism === 'SCRAM-SHA-256' ? 1 : 2;
}
