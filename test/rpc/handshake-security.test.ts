/**
 * The RPC handshake against peers that do not know the secret: a wrong
 * secret is refused and logged with the peer's address; a gateway with no
 * secret is told to give one; a gateway never talks to an impostor core (one
 * with another secret); a recorded handshake gives nothing to test guesses
 * of the secret against (it is TLS 1.2 with an ephemeral ECDH mixed into
 * every key, and the hello travels encrypted); a peer that stalls is closed
 * at the handshake deadline; connections still in their handshake are capped.
 */
import { connect, createServer, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { openCore, type Core } from '../../src/core/index.js';
import { connectCore, RpcServer, type RpcAddress } from '../../src/rpc/index.js';
import { HELLO_MAGIC, RPC_VERSION } from '../../src/rpc/handshake.js';
import { preSharedKey } from '../../src/rpc/psk.js';
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

async function serve(options: { handshakeTimeoutMs?: number; maxUnauthenticated?: number; tls?: TlsCredentials; secret?: string } = {}): Promise<{ address: RpcAddress & { port: number; host: string }; logs: LogCapture; core: Core }> {
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

/** A relay in front of `target` that records each direction's bytes. */
async function recordingRelay(target: { host: string; port: number }): Promise<{ address: { host: string; port: number }; fromGateway: Buffer[]; fromCore: Buffer[] }> {
  const fromGateway: Buffer[] = [];
  const fromCore: Buffer[] = [];
  const relay = createServer((inbound) => {
    const outbound = connect(target.port, target.host);
    inbound.on('data', (c: Buffer) => (fromGateway.push(c), outbound.write(c)));
    outbound.on('data', (c: Buffer) => (fromCore.push(c), inbound.write(c)));
    inbound.on('error', () => {});
    outbound.on('error', () => {});
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => relay.close(resolve)));
  return { address: { host: '127.0.0.1', port: (relay.address() as { port: number }).port }, fromGateway, fromCore };
}

/** The handshake messages one side sent in clear: TLS records up to its ChangeCipherSpec, each message's type and body. */
function cleartextHandshake(stream: Buffer): { type: number; body: Buffer }[] {
  const messages: { type: number; body: Buffer }[] = [];
  let handshake = Buffer.alloc(0);
  for (let at = 0; at + 5 <= stream.length; ) {
    const [contentType, length] = [stream[at]!, stream.readUInt16BE(at + 3)];
    if (contentType === 20) break; // ChangeCipherSpec: what follows is encrypted
    expect(contentType, 'a cleartext record before ChangeCipherSpec').toBe(22);
    handshake = Buffer.concat([handshake, stream.subarray(at + 5, at + 5 + length)]);
    at += 5 + length;
  }
  for (let at = 0; at + 4 <= handshake.length; ) {
    const length = handshake.readUIntBE(at + 1, 3);
    messages.push({ type: handshake[at]!, body: handshake.subarray(at + 4, at + 4 + length) });
    at += 4 + length;
  }
  return messages;
}

/** The extension types a ClientHello carries. */
function clientHelloExtensions(body: Buffer): number[] {
  let at = 2 + 32;
  at += 1 + body[at]!; // session id
  at += 2 + body.readUInt16BE(at); // cipher suites
  at += 1 + body[at]!; // compression methods
  const end = at + 2 + body.readUInt16BE(at);
  const types: number[] = [];
  for (at += 2; at + 4 <= end; at += 4 + body.readUInt16BE(at + 2)) types.push(body.readUInt16BE(at));
  return types;
}

describe('the RPC handshake against peers without the secret', () => {
  it('refuses a wrong secret, saying so on both sides, and logs the attempt with the peer address', async () => {
    const { address, logs } = await serve();
    await expect(connectCore({ address, secret: 'not-the-right-one', connectTimeoutMs: 2_000 })).rejects.toThrow(/holds a different RPC secret than this gateway; give both the same --rpc-secret/);
    await waitFor(() => logs.matching('rpc authentication failed', "RPC secret is not this core's", '127.0.0.1').length > 0, { what: 'the failed attempt in the core log', timeoutMs: 5_000 });
    expect(logs.lines.some((l) => l.includes('not-the-right-one') || l.includes(SECRET))).toBe(false);
  });

  it('tells a peer that gives no secret to give one', async () => {
    const { address, logs } = await serve();
    const peer = await open(address);
    const hello = Buffer.concat([Buffer.from([0, 0, 0, 1 + 4 + 2 + 8, 1]), HELLO_MAGIC, Buffer.from([RPC_VERSION >> 8, RPC_VERSION & 0xff]), METHOD_FINGERPRINT]);
    peer.socket.write(hello);
    await peer.closed;
    const refusal = peer.received();
    expect(refusal[4]).toBe(5); // Refused
    expect(refusal[5]).toBe(2); // authentication
    expect(refusal.subarray(6).toString('utf8')).toBe("Authentication failed: this core requires the shared RPC secret; give the gateway the core's --rpc-secret (QUEEN_RPC_SECRET).");
    expect(logs.matching('rpc connection refused', 'requires the shared RPC secret').length).toBe(1);
  });

  it('sends nothing an eavesdropper could test guesses of the secret against: the handshake is TLS 1.2 ECDHE-PSK and the hello travels encrypted', async () => {
    const { address } = await serve();
    const relay = await recordingRelay(address);
    const gateway = await connectCore({ address: relay.address, secret: SECRET, connectTimeoutMs: 10_000 });
    await gateway.createQueue({ name: 'recorded', partitions: 1 });
    await gateway.close();
    const [sent, answered] = [Buffer.concat(relay.fromGateway), Buffer.concat(relay.fromCore)];

    const gatewayMessages = cleartextHandshake(sent);
    const coreMessages = cleartextHandshake(answered);
    // ClientHello and ClientKeyExchange (the PSK identity and an ephemeral ECDH share); ServerHello, ServerKeyExchange, ServerHelloDone.
    expect(gatewayMessages.map((m) => m.type)).toEqual([1, 16]);
    expect(coreMessages.map((m) => m.type)).toEqual([2, 12, 14]);
    // No pre_shared_key extension (41), whose binder is keyed by the secret alone: this is no TLS 1.3 PSK handshake.
    expect(clientHelloExtensions(gatewayMessages[0]!.body)).not.toContain(41);
    // The ServerHello picks TLS 1.2 with ECDHE-PSK-CHACHA20-POLY1305 (0xCCAC): every key needs the ephemeral ECDH secret too.
    const serverHello = coreMessages[0]!.body;
    expect(serverHello.readUInt16BE(0)).toBe(0x0303);
    expect(serverHello.readUInt16BE(2 + 32 + 1 + serverHello[2 + 32]!)).toBe(0xccac);
    for (const captured of [sent, answered]) {
      expect(captured.includes(Buffer.from(SECRET))).toBe(false);
      expect(captured.includes(preSharedKey(SECRET))).toBe(false);
      expect(captured.includes(HELLO_MAGIC)).toBe(false);
      expect(captured.includes(Buffer.from('recorded'))).toBe(false);
    }
  });

  it('refuses an impostor core (one with another secret): the gateway says so and sends it no hello and no call', async () => {
    const impostor = await serve({ secret: 'the-impostor-has-another' });
    const relay = await recordingRelay(impostor.address);
    await expect(connectCore({ address: relay.address, secret: SECRET, connectTimeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'unauthenticated',
      message: expect.stringMatching(/holds a different RPC secret than this gateway/),
    });
    await waitFor(() => impostor.logs.matching('rpc authentication failed').length > 0, { what: 'the failed attempt in the impostor core log', timeoutMs: 5_000 });
    expect(impostor.logs.matching('rpc connection ready')).toEqual([]);
    // What reached the impostor: the TLS handshake up to the gateway's (encrypted) Finished, and no application data.
    const sent = Buffer.concat(relay.fromGateway);
    expect(cleartextHandshake(sent).map((m) => m.type)).toEqual([1, 16]);
    const records: number[] = [];
    for (let at = 0; at + 5 <= sent.length; at += 5 + sent.readUInt16BE(at + 3)) records.push(sent[at]!);
    expect(records).not.toContain(23); // application_data
  });

  it('closes a connection that does not finish the handshake within the deadline, logged', async () => {
    const { address, logs } = await serve({ handshakeTimeoutMs: 300 });
    const peer = await open(address);
    peer.socket.write(Buffer.from([0x16, 0x03, 0x01])); // the start of a TLS record, then nothing
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

  it('tells a gateway that gives a secret to a core that takes none (certificates only) to drop it', async () => {
    const pki = makeTestPki();
    cleanups.push(async () => pki.remove());
    const tls = new TlsCredentials({ certFile: pki.serverCert, keyFile: pki.serverKey, caFile: pki.caCert, clientAuth: 'required' });
    const { address, logs } = await serve({ tls, secret: undefined });
    const client = pki.client('gateway', '/CN=gateway');
    const gatewayTls = new TlsCredentials({ certFile: client.cert, keyFile: client.key, caFile: pki.caCert });
    await expect(connectCore({ address, secret: SECRET, tls: gatewayTls, connectTimeoutMs: 5_000 })).rejects.toThrow(
      'refused this gateway: Authentication failed: this core takes no RPC secret (gateways prove themselves by TLS client certificate); drop --rpc-secret on the gateway, or give the core the same one.',
    );
    expect(logs.matching('rpc connection refused', 'takes no RPC secret', 'CN=gateway').length).toBe(1);
    const withoutSecret = await connectCore({ address, tls: gatewayTls, connectTimeoutMs: 5_000 });
    cleanups.push(() => withoutSecret.close());
    expect(Array.isArray(await withoutSecret.listQueues())).toBe(true);
  });
});
