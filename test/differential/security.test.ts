/**
 * SASL and authorization on the wire, gateway against Apache Kafka (issue 19):
 * the scenarios of ./scenarios/security.ts run on Apache Kafka and on the
 * gateway, both secured alike (test/support/secured-brokers.ts), and the
 * observations compared field by field through the table of deliberate
 * differences (./differences.ts), as the other differential suites are.
 *
 * The gateway runs on the memory engine only here: what is compared is the
 * gateway's SASL and authorizer, which are the same code over either engine
 * (the SCRAM credentials and ACLs it reads from the core are covered on both
 * engines by test/core and test/e2e/authorization.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSecurityFixture, startSecuredGateway, startSecuredKafka, type SecuredBroker, type SecurityFixture } from '../support/secured-brokers.js';
import { describeVerdict, judge, Normaliser, type Observation, type Target } from './harness.js';
import { SECURITY_SCENARIOS, SESSION_MS } from './scenarios/security.js';
import { dumpObservations } from './targets.js';

let fixture: SecurityFixture;
let kafka: SecuredBroker;
let gateway: SecuredBroker;

beforeAll(async () => {
  fixture = makeSecurityFixture();
  [kafka, gateway] = await Promise.all([startSecuredKafka(fixture, { maxReauthMs: SESSION_MS }), startSecuredGateway(fixture, { maxReauthMs: SESSION_MS })]);
}, 240_000);
afterAll(async () => {
  await Promise.allSettled([kafka?.stop(), gateway?.stop()]);
  fixture?.remove();
});

function target(broker: SecuredBroker): Target {
  return { name: broker.name === 'kafka' ? 'kafka' : 'memory', bootstrap: broker.bootstrap.SASL_PLAINTEXT, host: '127.0.0.1', port: broker.port.SASL_PLAINTEXT, nodeId: 1 };
}

describe('differential: SASL and authorization on the wire, gateway (memory engine) against Apache Kafka', () => {
  for (const scenario of SECURITY_SCENARIOS) {
    it(scenario.name, async () => {
      const run = (broker: SecuredBroker): Promise<Observation> =>
        scenario.run({ broker, fixture, normalise: new Normaliser(target(broker)) }).catch((e: Error) => Promise.reject(new Error(`scenario "${scenario.name}" failed on ${broker.name}: ${e.message}`, { cause: e })));
      const [reference, candidate] = await Promise.all([run(kafka), run(gateway)]);
      dumpObservations(scenario.name, { kafka: reference, memory: candidate });
      expect(describeVerdict(scenario.name, 'memory', judge(scenario.name, 'memory', reference, candidate)), 'observations differ').toBe('');
    }, 120_000);
  }
});
