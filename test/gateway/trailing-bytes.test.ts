import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import { decodeResponse } from '../../protocol/frames.js';
import { startBroker, type Broker } from '../../src/index.js';
import { sizePrefix, WireClient } from './wire-client.js';

/**
 * Kafka's broker ignores bytes after a request's last field, and clients rely
 * on it: librdkafka 2.x sends its "all topics" Metadata v12 request with three
 * such bytes. The gateway answers it like Kafka does instead of closing the
 * connection.
 */
describe('requests with trailing bytes', () => {
  let broker: Broker;

  beforeAll(async () => {
    broker = await startBroker();
    await broker.core.createQueue({ name: 'trailing', partitions: 2, config: { dedupWindowSeconds: 0 } });
  });
  afterAll(() => broker.stop());

  it('answers librdkafka\'s Metadata v12 request, trailing bytes and all, with every topic', async () => {
    const client = await WireClient.open(broker.port);
    // The exact frame librdkafka 2.15 sends (size prefix first), captured from the wire.
    const body = Buffer.from('0003000c00000003000772646b61666b610000000000010000', 'hex');
    client.write(sizePrefix(body.length, body));
    const arrived = await client.next();
    const { correlationId, body: response } = decodeResponse(arrived.frame, ApiKey.Metadata, 12);
    expect(correlationId).toBe(3);
    expect(response.topics.map((t: { name: string }) => t.name)).toContain('trailing');
    expect(client.isClosed).toBe(false);
    client.destroy();
  });
});
