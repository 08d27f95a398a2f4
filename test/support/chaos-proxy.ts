/**
 * A TCP proxy between Kafka clients and a gateway that can cut every client
 * connection on command, mid-stream, to prove that reconnecting clients
 * (idempotent producers above all) lose and duplicate nothing.
 *
 * Clients dial the address Metadata advertises, not only the bootstrap
 * address, so the gateway behind the proxy must advertise the proxy's port.
 * That is why the proxy listens before it knows where to forward: start it,
 * start the gateway advertising `proxy.port`, then `proxy.forwardTo(port)`.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface ChaosProxy {
  host: string;
  port: number;
  /** Where new client connections are forwarded. Until set, they are refused (closed). */
  forwardTo(port: number, host?: string): void;
  /** Destroys every open client connection and its upstream twin at once. */
  dropAll(): number;
  /** Client connections accepted so far. */
  readonly accepted: number;
  /** Bytes clients have sent through the proxy so far. */
  readonly bytesFromClients: number;
  /** Client connections open right now. */
  readonly open: number;
  close(): Promise<void>;
}

export async function startChaosProxy(host = '127.0.0.1'): Promise<ChaosProxy> {
  let target: { host: string; port: number } | null = null;
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let accepted = 0;
  let bytesFromClients = 0;

  const server: Server = createServer((client) => {
    accepted += 1;
    if (!target) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    const pair = { client, upstream };
    pairs.add(pair);
    const teardown = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      bytesFromClients += chunk.length;
    });
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', teardown);
    upstream.on('error', teardown);
    client.on('close', teardown);
    upstream.on('close', teardown);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the chaos proxy has no TCP address');

  return {
    host,
    port: address.port,
    forwardTo(port, upstreamHost = '127.0.0.1') {
      target = { host: upstreamHost, port };
    },
    dropAll() {
      const n = pairs.size;
      for (const pair of [...pairs]) {
        // resetAndDestroy sends RST, the abrupt cut a network failure looks like.
        pair.client.resetAndDestroy();
        pair.upstream.resetAndDestroy();
        pairs.delete(pair);
      }
      return n;
    },
    get accepted() {
      return accepted;
    },
    get bytesFromClients() {
      return bytesFromClients;
    },
    get open() {
      return pairs.size;
    },
    close() {
      for (const pair of [...pairs]) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      pairs.clear();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
