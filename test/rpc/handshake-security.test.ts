/**
 * The RPC handshake against peers that do not know the secret: a wrong
 * secret is refused and logged with the peer's address; a peer that says
 * hello and nothing more is closed at the handshake deadline; connections
 * still in their handshake are capped; and what the core sends to a peer
 * that has proved nothing is no oracle for the secret (the v1 handshake
 * sent HMAC(secret, nonces), which an offline dictionary could test).
 */
import { createHmac } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { openCore, type Core } from '../../src/core/index.js';
import { connectCore, RpcServer, type RpcAddress } from '../../src/rpc/index.js';
import { HELLO_MAGIC, PAKE_VALUE_BYTES, RPC_VERSION } from '../../src/rpc/handshake.js';
import { METHOD_FINGERPRINT } from '../../src/rpc/methods.js';
import { LogCapture } from '../support/gateway.js';
import { makeTestPki } from '../support/certificates.js';
import { TlsCredentials } from '../../src/tls/credentials.js';
import { waitFor } from '../support/eventually.js';

const SECRET = 'a-weak-secret-16';
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!().catch(() => {});
});

async function serve(options: { handshakeTimeoutMs?: number; maxUnauthenticated?: number; tls?: TlsCredentials } = {}): Promise<{ address: RpcAddress & { port: number; host: string }; logs: LogCapture; core: Core }> {
  const core = await openCore({ engine: 'memory' });
  cleanups.push(() => core.close());
  const logs = new LogCapture();
  const log = pino({ level: 'debug' }, new Writable({ write: (chunk: Buffer, _e, done) => (logs.write(chunk.toString()), done()) }));
  const server = new RpcServer({ core, secret: SECRET, log, ...options });
  const address = (await server.listen({ host: '127.0.0.1', port: 0 })) as RpcAddress & { port: number; host: string };
  cleanups.push(() => server.close());
  return { address, logs, core };
}

function open(address: { host: string; port: number }): Promise<{ socket: Socket; received: () => Buffer; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(address.port, address.host);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('connect', () => resolve({ socket, received: () => Buffer.concat(chunks), closed }));
    socket.once('error', reject);
  });
}

/** A hello with a key-exchange value made without the secret (any group element will do for an attacker). */
function attackerHello(): Buffer {
  const body = Buffer.concat([Buffer.from([1]), HELLO_MAGIC, Buffer.from([RPC_VERSION >> 8, RPC_VERSION & 0xff]), METHOD_FINGERPRINT, Buffer.alloc(PAKE_VALUE_BYTES - 1), Buffer.from([4])]);
  const size = Buffer.alloc(4);
  size.writeUInt32BE(body.length);
  return Buffer.concat([size, body]);
}

describe('the RPC handshake against peers without the secret', () => {
  it('refuses a wrong secret and logs the attempt with the peer address', async () => {
    const { address, logs } = await serve();
    await expect(connectCore({ address, secret: 'not-the-right-one', connectTimeoutMs: 2_000 })).rejects.toThrow(/--rpc-secret/);
    await waitFor(() => logs.matching('rpc authentication failed', '127.0.0.1').length > 0, { what: 'the failed attempt in the core log', timeoutMs: 5_000 });
    expect(logs.lines.some((l) => l.includes('not-the-right-one') || l.includes(SECRET))).toBe(false);
  });

  it("answers a hello from a peer that proved nothing with values no guess of the secret can be checked against the old way", async () => {
    const { address } = await serve();
    const peer = await open(address);
    peer.socket.write(attackerHello());
    await waitFor(() => peer.received().length >= 4 + 1 + 2 + PAKE_VALUE_BYTES + 32, { what: 'the challenge', timeoutMs: 5_000 });
    const challenge = peer.received().subarray(5);
    const serverValue = challenge.subarray(2, 2 + PAKE_VALUE_BYTES);
    const confirmation = challenge.subarray(2 + PAKE_VALUE_BYTES, 2 + PAKE_VALUE_BYTES + 32);
    // The v1 handshake's server proof, for the right secret, over anything the peer saw: none matches.
    const hello = attackerHello().subarray(5);
    for (const nonces of [[hello.subarray(-32), serverValue.subarray(0, 32)], [hello, serverValue]]) {
      const v1 = createHmac('sha256', SECRET).update(`queen-rpc server v1\n`).update(nonces[0]!).update(nonces[1]!).digest();
      expect(confirmation.equals(v1)).toBe(false);
    }
    // And the same hello twice gets different answers: the server's share is fresh per connection.
    const again = await open(address);
    again.socket.write(attackerHello());
    await waitFor(() => again.received().length >= 4 + 1 + 2 + PAKE_VALUE_BYTES + 32, { what: 'the second challenge', timeoutMs: 5_000 });
    expect(again.received().subarray(7, 7 + PAKE_VALUE_BYTES).equals(serverValue)).toBe(false);
    peer.socket.destroy();
    again.socket.destroy();
  });

  it('closes a connection that does not finish the handshake within the deadline, logged', async () => {
    const { address, logs } = await serve({ handshakeTimeoutMs: 300 });
    const peer = await open(address);
    peer.socket.write(attackerHello());
    await peer.closed;
    expect(logs.matching('the handshake did not finish in time').length).toBe(1);
  });

  it('caps connections still in their handshake; an authenticated gateway still gets in once they go', async () => {
    const { address, logs, core } = await serve({ maxUnauthenticated: 3, handshakeTimeoutMs: 60_000 });
    const idle = await Promise.all([0, 1, 2].map(() => open(address)));
    const extra = await open(address);
    await extra.closed;
    await waitFor(() => logs.matching('too many are still in their handshake').length === 1, { what: 'the cap in the log', timeoutMs: 5_000 });
    for (const peer of idle) peer.socket.destroy();
    await Promise.all(idle.map((p) => p.closed));
    const gateway = await connectCore({ address, secret: SECRET, connectTimeoutMs: 5_000 });
    cleanups.push(() => gateway.close());
    await core.createQueue({ name: 'after-cap', partitions: 1 });
    expect((await gateway.listQueues()).map((q) => q.name)).toContain('after-cap');
  });

  it('counts a TLS connection from its TCP accept: peers stuck before the TLS handshake are capped and closed at the deadline', async () => {
    const pki = makeTestPki();
    cleanups.push(async () => pki.remove());
    const tls = new TlsCredentials({ certFile: pki.serverCert, keyFile: pki.serverKey, caFile: pki.caCert, clientAuth: 'required' });
    const { address, logs } = await serve({ tls, maxUnauthenticated: 2, handshakeTimeoutMs: 1_500 });
    // Plain TCP connections that never start TLS.
    const idle = await Promise.all([0, 1].map(() => open(address)));
    const extra = await open(address);
    await extra.closed;
    await waitFor(() => logs.matching('too many are still in their handshake').length === 1, { what: 'the cap in the log', timeoutMs: 5_000 });
    await Promise.all(idle.map((p) => p.closed));
    expect(logs.matching('the handshake did not finish in time').length).toBe(2);
    // Room again: a gateway with a certificate gets in.
    const client = pki.client('gateway', '/CN=gateway');
    const gateway = await connectCore({ address, secret: SECRET, tls: new TlsCredentials({ certFile: client.cert, keyFile: client.key, caFile: pki.caCert }), connectTimeoutMs: 5_000 });
    cleanups.push(() => gateway.close());
    expect(Array.isArray(await gateway.listQueues())).toBe(true);
  });
});
