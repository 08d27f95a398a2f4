/**
 * The RPC transport's own promises, on loopback: values cross intact (Buffers
 * as bytes), calls are answered out of order, a long-poll is cancelled when
 * its caller aborts, deadlines hold, refusals say what is wrong, CoreErrors
 * arrive as CoreErrors, a lost connection is dialled again, and an append cut
 * off after the core committed is retried without appending twice.
 */
import { connect, createServer, type Socket } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core/index.js';
import { connectCore, RpcServer, type RpcAddress, type RpcCore, type RpcFaults } from '../../src/rpc/index.js';
import { decodeValue, encodeValue, ValueDecodeError } from '../../src/rpc/values.js';
import { RPC_VERSION } from '../../src/rpc/handshake.js';
import { preSharedKey, pskClientSocket } from '../../src/rpc/psk.js';
import { recordBatch } from '../core/behaviour.js';

const SECRET = 'transport-test-secret';
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(core: Core, options: { faults?: RpcFaults; address?: RpcAddress; secret?: string } = {}) {
  const server = new RpcServer({ core, secret: options.secret ?? SECRET, ...(options.faults ? { faults: options.faults } : {}) });
  const address = await server.listen(options.address ?? { host: '127.0.0.1', port: 0 });
  cleanups.push(() => server.close());
  return { server, address };
}

async function client(address: RpcAddress, options: { secret?: string; callTimeoutMs?: number } = {}): Promise<RpcCore> {
  const core = await connectCore({ address, secret: options.secret ?? SECRET, ...(options.callTimeoutMs ? { callTimeoutMs: options.callTimeoutMs } : {}) });
  cleanups.push(() => core.close());
  return core;
}

async function memoryCore(): Promise<Core> {
  const core = await openCore({ engine: 'memory', groups: { initialRebalanceDelayMs: 0 } });
  cleanups.push(() => core.close());
  return core;
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: Error & { code?: string }) => e,
  );
}

/** A raw socket to the server, collecting what comes back. */
async function rawSocket(address: RpcAddress): Promise<{ socket: Socket; received: () => Buffer; closed: Promise<void> }> {
  const socket = 'path' in address ? connect(address.path) : connect(address.port, address.host);
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await new Promise((resolve) => socket.once('connect', resolve));
  return { socket, received: () => Buffer.concat(chunks), closed };
}

describe('the value encoding', () => {
  it('round-trips the plain values the core speaks, Buffers as their bytes', () => {
    const batch = Buffer.alloc(4096, 7);
    const value = {
      text: 'grüße',
      n: [0, 1, -1, 2 ** 40, -(2 ** 52), 2 ** 60, 1.5, Number.NaN, Infinity],
      flags: [true, false, null, undefined],
      records: batch,
      small: Buffer.from([1, 2, 3]),
      nested: { deeper: [{ empty: {} }, []] },
      big: 12345678901234567890n,
    };
    const decoded = decodeValue(encodeValue(value)) as typeof value;
    expect(decoded).toEqual(value);
    expect(Buffer.isBuffer(decoded.records)).toBe(true);
    expect(Object.is(decodeValue(encodeValue(-0)), -0)).toBe(true);
  });

  it('carries a batch as raw bytes: the encoding is the batch plus a few bytes, never base64', () => {
    const batch = Buffer.alloc(10_000, 0xab);
    expect(encodeValue(batch).length).toBeLessThan(10_010);
  });

  it('keeps a __proto__ key as data, never as the prototype', () => {
    const bytes = encodeValue(JSON.parse('{"__proto__": {"polluted": true}}'));
    const decoded = decodeValue(bytes) as Record<string, unknown>;
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(Object.keys(decoded)).toEqual(['__proto__']);
  });

  it('refuses a count larger than the bytes that follow instead of allocating for it', () => {
    // Array tag, then a varint of 2^35.
    expect(() => decodeValue(Buffer.from([8, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]))).toThrow(ValueDecodeError);
    expect(() => decodeValue(Buffer.from([6, 5, 0x61]))).toThrow(/ends 4 bytes early/);
  });

  it('refuses what is not plain data on the sending side', () => {
    expect(() => encodeValue({ when: new Map() })).toThrow(/plain data/);
    expect(() => encodeValue(() => 1)).toThrow(/plain data/);
  });
});

describe('calls over the RPC', () => {
  it('answers a quick call while a long-poll on the same connection is still waiting', async () => {
    const core = await memoryCore();
    const { address } = await serve(core);
    const rpc = await client(address);
    await rpc.createQueue({ name: 'slow', partitions: 1 });
    const order: string[] = [];
    const poll = rpc
      .read({ partitions: [{ queue: 'slow', partition: 0, fetchOffset: 0, maxBytes: 1 << 20 }], minBytes: 1, maxWaitMs: 60_000, maxBytes: 1 << 20, isolation: 'read_uncommitted' })
      .then((r) => {
        order.push('poll');
        return r;
      });
    await rpc.listQueues().then(() => order.push('list'));
    await rpc.append({ partitions: [{ queue: 'slow', partition: 0, records: recordBatch(['wake']) }] });
    const woke = await poll;
    expect(order).toEqual(['list', 'poll']);
    expect(woke.partitions[0]!.batches).toHaveLength(1);
  });

  it('aborts the core call when the caller aborts a long-poll, and answers it empty', async () => {
    const core = await memoryCore();
    const { address } = await serve(core);
    const rpc = await client(address);
    await rpc.createQueue({ name: 'quiet', partitions: 1 });
    const controller = new AbortController();
    const pop = rpc.pop({ queue: 'quiet', consumerGroup: 'g', owner: 'w', batch: 1, waitMs: 120_000 }, { signal: controller.signal });
    const join = rpc.joinGroup(
      { group: 'held', memberId: '', groupInstanceId: null, clientId: 'c', clientHost: 'h', sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 120_000, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.from([0, 1, 2]) }], requireKnownMemberId: false, reason: null },
    );
    controller.abort();
    expect((await pop).messages).toEqual([]);
    // The aborted pop held no lease: a second worker pops at once.
    await rpc.push({ items: [{ queue: 'quiet', payload: 'x' }] });
    expect((await rpc.pop({ queue: 'quiet', consumerGroup: 'g', owner: 'w2', batch: 1, waitMs: 0 })).messages).toHaveLength(1);
    // A join held by the coordinator (the initial delay is 0 here) completes through the hop with its bytes.
    const joined = await join;
    expect(joined.error).toBeNull();
    expect(joined.members[0]!.metadata).toEqual(Buffer.from([0, 1, 2]));
  });

  it('fails a call the core does not answer within the deadline, with a sentence that says so', async () => {
    const hanging = new Proxy({}, { get: (_t, name) => (name === 'close' ? async () => {} : () => new Promise(() => {})) }) as Core;
    const { address } = await serve(hanging);
    const rpc = await client(address, { callTimeoutMs: 200 });
    const error = await rejection(rpc.listQueues());
    expect(error).toMatchObject({ name: 'RpcError', code: 'deadline_exceeded' });
    expect(error.message).toMatch(/did not answer listQueues within 200 ms/);
  });

  it('rethrows a CoreError with the same code and message as the core itself', async () => {
    const core = await memoryCore();
    const { address } = await serve(core);
    const rpc = await client(address);
    const direct = await rejection(core.createQueue({ name: 'bad name!', partitions: 1 }));
    const remote = await rejection(rpc.createQueue({ name: 'bad name!', partitions: 1 }));
    expect(remote).toMatchObject({ name: 'CoreError', code: direct.code, message: direct.message });
    expect(remote.constructor).toBe(direct.constructor);
  });

  it('carries large values both ways, arriving in many chunks, byte for byte', async () => {
    const core = await memoryCore();
    const { address } = await serve(core);
    const rpc = await client(address);
    await rpc.createQueue({ name: 'large', partitions: 1 });
    // A 900 KiB record (under the core's message limit): a frame many socket reads long, so both splitters assemble it from pieces.
    const value = Array.from({ length: 900 * 1024 }, (_, i) => String.fromCharCode(33 + ((i * 31) % 94))).join('');
    const records = recordBatch([value]);
    const appended = await rpc.append({ partitions: [{ queue: 'large', partition: 0, records }] });
    expect(appended.partitions[0]).toMatchObject({ error: null, baseOffset: 0 });
    const read = await rpc.read({ partitions: [{ queue: 'large', partition: 0, fetchOffset: 0, maxBytes: 1 }], minBytes: 1, maxWaitMs: 0, maxBytes: 1, isolation: 'read_uncommitted' });
    const stored = read.partitions[0]!.batches;
    // Stored verbatim but for the base offset and leader epoch the core assigns (before the CRC'd part).
    expect(Buffer.concat(stored).subarray(21).equals(records.subarray(21))).toBe(true);
  });

  it('closes a connection whose frame, once authenticated, is larger than the maximum', async () => {
    const core = await memoryCore();
    const server = new RpcServer({ core, secret: SECRET, maxFrameBytes: 1024 * 1024 });
    const address = await server.listen({ host: '127.0.0.1', port: 0 });
    cleanups.push(() => server.close());
    const rpc = await client(address);
    await rpc.createQueue({ name: 'capped', partitions: 1 });
    // An idempotent producer's batch, so the client reports the lost call rather than repeating it.
    const { producerId, producerEpoch } = await rpc.initProducer({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
    const records = recordBatch(['x'.repeat(2 * 1024 * 1024)], { producerId, producerEpoch, baseSequence: 0 });
    const error = await rejection(rpc.append({ partitions: [{ queue: 'capped', partition: 0, records }] }));
    // The client cannot know the outcome; the core never saw the call and holds nothing of it.
    expect(error).toMatchObject({ name: 'RpcError', code: 'connection_lost' });
    const offsets = await core.offsets({ partitions: [{ queue: 'capped', partition: 0 }] });
    expect(offsets.partitions[0]!.highWatermark).toBe(0);
    // The client dials again and small calls go on working.
    expect((await rpc.describeQueue({ name: 'capped' }))!.name).toBe('capped');
  });

  it('works over a Unix socket', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'queen-rpc-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const core = await memoryCore();
    const { address } = await serve(core, { address: { path: join(dir, 'core.sock') } });
    const rpc = await client(address);
    await rpc.createQueue({ name: 'sock', partitions: 2 });
    expect((await rpc.describeQueue({ name: 'sock' }))!.partitions).toHaveLength(2);
  });
});

describe('the handshake', () => {
  it('refuses a gateway with another secret, naming the setting to fix, and never sends the secret', async () => {
    const core = await memoryCore();
    const { address } = await serve(core);
    const error = await rejection(connectCore({ address, secret: 'some-other-secret', connectTimeoutMs: 2_000 }));
    expect(error).toMatchObject({ name: 'RpcError', code: 'unauthenticated' });
    expect(error.message).toMatch(/--rpc-secret/);

    // Through a recording relay, a successful handshake and a call: the secret's bytes never cross.
    const sent: Buffer[] = [];
    const relay = createServer((inbound) => {
      const outbound = connect((address as { port: number }).port, '127.0.0.1');
      inbound.on('data', (c: Buffer) => {
        sent.push(c);
        outbound.write(c);
      });
      outbound.on('data', (c: Buffer) => inbound.write(c));
      inbound.on('close', () => outbound.destroy());
      outbound.on('close', () => inbound.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => relay.close(resolve)));
    const rpc = await client({ host: '127.0.0.1', port: (relay.address() as { port: number }).port });
    await rpc.listQueues();
    await rpc.close();
    expect(sent.length).toBeGreaterThan(0);
    expect(Buffer.concat(sent).includes(Buffer.from(SECRET))).toBe(false);
  });

  it('refuses a gateway of another RPC version with a clear sentence, inside the TLS-PSK session and to a cleartext hello of version 2', async () => {
    const core = await memoryCore();
    const { address } = await serve(core);
    const helloOfVersion = (version: number) => {
      const hello = Buffer.alloc(4 + 1 + 4 + 2 + 8);
      hello.writeUInt32BE(hello.length - 4, 0);
      hello[4] = 1; // Hello
      hello.write('QRPC', 5, 'ascii');
      hello.writeUInt16BE(version, 9);
      return hello;
    };
    const refusalOf = (reply: Buffer) => {
      expect(reply[4]).toBe(5); // Refused
      expect(reply[5]).toBe(1); // version
      return reply.subarray(6).toString('utf8');
    };
    // A later release: the same secret, so TLS-PSK completes and the hello inside it names the versions.
    const raw = await rawSocket(address);
    const secured = pskClientSocket(raw.socket, preSharedKey(SECRET));
    const chunks: Buffer[] = [];
    secured.on('data', (c: Buffer) => chunks.push(c));
    await new Promise((resolve) => secured.once('secureConnect', resolve));
    secured.write(helloOfVersion(99));
    await raw.closed;
    expect(refusalOf(Buffer.concat(chunks))).toMatch(new RegExp(`version 99 and this core speaks version ${RPC_VERSION}: run the same queen-gateway release`));
    // Version 2 said hello in clear, before any authentication; it is told the same.
    const old = await rawSocket(address);
    old.socket.write(helloOfVersion(2));
    await old.closed;
    expect(refusalOf(old.received())).toMatch(new RegExp(`version 2 and this core speaks version ${RPC_VERSION}: run the same queen-gateway release`));
  });

  it('closes an unauthenticated connection that announces a large frame, before buffering it', async () => {
    const core = await memoryCore();
    const { address } = await serve(core);
    const raw = await rawSocket(address);
    const header = Buffer.alloc(5);
    header.writeUInt32BE(200 * 1024 * 1024, 0);
    header[4] = 1;
    raw.socket.write(header);
    await raw.closed;
    expect(raw.received().length).toBe(0);
  });

  it('closes a connection that does not speak the protocol', async () => {
    const core = await memoryCore();
    const { address } = await serve(core);
    const raw = await rawSocket(address);
    raw.socket.write('GET / HTTP/1.1\r\nHost: core\r\n\r\n');
    await raw.closed;
    expect(raw.received().length).toBe(0);
  });
});

describe('reconnecting', () => {
  it('dials again after the core restarts and carries on with new calls', async () => {
    const core = await memoryCore();
    const first = await serve(core);
    const rpc = await client(first.address);
    await rpc.createQueue({ name: 'survives', partitions: 1 });
    await first.server.close();
    const again = new RpcServer({ core, secret: SECRET });
    await again.listen(first.address);
    cleanups.push(() => again.close());
    // describeQueue changes nothing, so it waits for the new connection and is sent on it.
    expect((await rpc.describeQueue({ name: 'survives' }))!.name).toBe('survives');
  });
});

describe('exactly once across the hop', () => {
  /** Drops the connection after the core has committed the first append, before its answer goes out. */
  function dropFirstAppendReply(): RpcFaults & { dropped: number } {
    const faults = {
      dropped: 0,
      beforeReply(call: { method: string }) {
        if (call.method !== 'append' || faults.dropped > 0) return;
        faults.dropped++;
        return 'drop-connection' as const;
      },
    };
    return faults;
  }

  it('retries an append carrying a requestId after the reply is lost, and the core appends it once', async () => {
    const core = await memoryCore();
    const faults = dropFirstAppendReply();
    const { address } = await serve(core, { faults });
    const rpc = await client(address);
    await rpc.createQueue({ name: 'once', partitions: 1 });
    const result = await rpc.append({ requestId: 'produce-1', partitions: [{ queue: 'once', partition: 0, records: recordBatch(['only once']) }] });
    expect(faults.dropped).toBe(1);
    expect(result.partitions[0]).toMatchObject({ error: null, baseOffset: 0 });
    const offsets = await core.offsets({ partitions: [{ queue: 'once', partition: 0 }] });
    expect(offsets.partitions[0]!.highWatermark).toBe(1);
  });

  it('keys an append from a producer without an id itself, so its retry after a lost reply appends once', async () => {
    const core = await memoryCore();
    const faults = dropFirstAppendReply();
    const { address } = await serve(core, { faults });
    const rpc = await client(address);
    await rpc.createQueue({ name: 'keyed-here', partitions: 1 });
    // The caller gives no requestId: whether the core is across the RPC is none of its business.
    const result = await rpc.append({ partitions: [{ queue: 'keyed-here', partition: 0, records: recordBatch(['only once']) }] });
    expect(faults.dropped).toBe(1);
    expect(result.partitions[0]).toMatchObject({ error: null, baseOffset: 0 });
    const offsets = await core.offsets({ partitions: [{ queue: 'keyed-here', partition: 0 }] });
    expect(offsets.partitions[0]!.highWatermark).toBe(1);
    // The next append is a call of its own with a key of its own: it is appended, not answered from the ledger.
    const next = await rpc.append({ partitions: [{ queue: 'keyed-here', partition: 0, records: recordBatch(['second']) }] });
    expect(next.partitions[0]).toMatchObject({ error: null, baseOffset: 1 });
  });

  it("does not repeat an idempotent producer's append (keyed by its sequence, not by the ledger): its outcome is reported unknown", async () => {
    const core = await memoryCore();
    const faults = dropFirstAppendReply();
    const { address } = await serve(core, { faults });
    const rpc = await client(address);
    await rpc.createQueue({ name: 'unknown', partitions: 1 });
    const { producerId, producerEpoch } = await rpc.initProducer({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
    const batch = recordBatch(['maybe'], { producerId, producerEpoch, baseSequence: 0 });
    const error = await rejection(rpc.append({ partitions: [{ queue: 'unknown', partition: 0, records: batch }] }));
    expect(error).toMatchObject({ name: 'RpcError', code: 'connection_lost' });
    expect(error.message).toMatch(/may or may not have taken effect/);
    const offsets = await core.offsets({ partitions: [{ queue: 'unknown', partition: 0 }] });
    expect(offsets.partitions[0]!.highWatermark).toBe(1);
  });
});
