/**
 * The bridge's Kafka client (src/kafka-client) logs in as the bridge's
 * --source-option settings say, against the secured gateway and a secured
 * Apache Kafka 4 broker alike (test/support/secured-brokers.ts): TLS alone,
 * and SASL_SSL with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (a
 * token from an OIDC token endpoint by the client-credentials grant, as
 * librdkafka's sasl.oauthbearer.method=oidc fetches it). Once in, it reads the
 * cluster's metadata and its groups; a wrong password or token is refused
 * with a sentence saying so, and a setting the client does not know is
 * refused before anything is dialed.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaClient } from '../../src/kafka-client/client.js';
import { makeSecurityFixture, SECURED_USERS, startSecuredGateway, startSecuredKafka, type SecuredBroker, type SecurityFixture } from '../support/secured-brokers.js';

let fixture: SecurityFixture;
let tokenEndpoint: Server;
let tokenUrl: string;

beforeAll(async () => {
  fixture = makeSecurityFixture();
  // The client-credentials grant: client id "admin" with secret "admin-secret" gets a token for admin; anything else is refused.
  tokenEndpoint = createServer((req, res) => {
    const [id, secret] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString().split(':');
    if (req.method !== 'POST' || id === undefined || SECURED_USERS[id as keyof typeof SECURED_USERS] !== secret) {
      res.writeHead(401).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: fixture.token(id), token_type: 'bearer', expires_in: 300 }));
  });
  await new Promise<void>((resolve) => tokenEndpoint.listen(0, '127.0.0.1', resolve));
  const address = tokenEndpoint.address();
  tokenUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/token`;
});
afterAll(async () => {
  await new Promise((resolve) => tokenEndpoint?.close(resolve));
  fixture?.remove();
});

const MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const;

function saslSettings(mechanism: (typeof MECHANISMS)[number], secret: string): Record<string, string> {
  const common = { 'security.protocol': 'sasl_ssl', 'ssl.ca.location': fixture.pki.caCert, 'sasl.mechanisms': mechanism };
  return mechanism === 'OAUTHBEARER'
    ? { ...common, 'sasl.oauthbearer.method': 'oidc', 'sasl.oauthbearer.token.endpoint.url': tokenUrl, 'sasl.oauthbearer.client.id': 'admin', 'sasl.oauthbearer.client.secret': secret }
    : { ...common, 'sasl.username': 'admin', 'sasl.password': secret };
}

async function connectAndList(bootstrap: string, settings: Record<string, string>): Promise<{ brokers: number; groups: string[] }> {
  const client = await KafkaClient.connect({ bootstrap, settings });
  try {
    await client.refreshMetadata(null);
    return { brokers: client.brokerIds.length, groups: await client.listGroups() };
  } finally {
    client.close();
  }
}

for (const name of ['gateway', 'kafka'] as const) {
  describe(`the bridge's Kafka client against the secured ${name}`, () => {
    let broker: SecuredBroker;
    beforeAll(async () => {
      broker = name === 'gateway' ? await startSecuredGateway(fixture) : await startSecuredKafka(fixture);
    }, 180_000);
    afterAll(async () => {
      await broker?.stop();
    });

    it('reads metadata and groups over TLS alone (SSL), the CA from ssl.ca.location', async () => {
      expect((await connectAndList(broker.bootstrap.SSL, { 'security.protocol': 'ssl', 'ssl.ca.location': fixture.pki.caCert })).brokers).toBe(1);
    }, 60_000);

    for (const mechanism of MECHANISMS) {
      it(`logs in over SASL_SSL with ${mechanism}, and a wrong ${mechanism === 'OAUTHBEARER' ? 'client secret' : 'password'} is refused saying so`, async () => {
        expect((await connectAndList(broker.bootstrap.SASL_SSL, saslSettings(mechanism, SECURED_USERS.admin))).brokers).toBe(1);
        const wrong = await connectAndList(broker.bootstrap.SASL_SSL, saslSettings(mechanism, 'not-the-secret')).catch((e: Error) => e);
        expect(wrong instanceof Error ? wrong.message : 'logged in').toMatch(mechanism === 'OAUTHBEARER' ? /token endpoint .* answered HTTP 401/ : /SASL authentication error: Authentication failed .* invalid credentials/);
      }, 60_000);
    }
  });
}

it('refuses a setting it does not know, naming it, before dialing anything', async () => {
  const refused = await KafkaClient.connect({ bootstrap: '127.0.0.1:1', settings: { 'sasl.kerberos.service.name': 'kafka' } }).catch((e: Error) => e);
  expect(refused instanceof Error ? refused.message : 'connected').toMatch(/the setting sasl\.kerberos\.service\.name is not one the bridge's Kafka client takes/);
});
