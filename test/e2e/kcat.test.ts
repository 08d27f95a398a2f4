/**
 * kcat (its own librdkafka, an older one than the Node binding's) against the
 * gateway, on every engine: produce keyed records with headers to several
 * partitions in every codec and at acks 0/1/all, consume them back with
 * partition, offset, timestamp, key and headers; Metadata (-L) for an unknown
 * topic with auto-create off; offsets by timestamp (-Q and -o s@); and a
 * consume below the start after DeleteRecords. kcat has no admin commands:
 * topics are created and records deleted with librdkafka's AdminClient.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { expectSameRecords, planRecords, uniqueTopic, type Header, type SentRecord } from '../support/records.js';
import { kcatConsume, kcatMetadata, kcatOffsetForTime, kcatProduce, runKcat } from '../support/kcat.js';
import { adminCall, createAdmin, createTopic } from '../support/rdkafka.js';

const engines = await engineMatrix();
afterAll(releaseEngines);

const kcatVersion = (await runKcat(['-V'])).stdout.match(/Version (\S+)/)?.[1] ?? 'unknown';

/**
 * Produces the records partition by partition (kcat's -H sets one header list
 * for a whole run, so every record of a partition carries the same headers).
 * Returns the records as sent, headers filled in, and the time window in which
 * kcat stamped them.
 */
async function produceWithKcat(
  bootstrap: string,
  topic: string,
  partitions: number,
  perPartition: number,
  settings: { codec?: string; acks?: string },
): Promise<{ sent: SentRecord[]; from: number; to: number }> {
  const planned = planRecords({ label: topic, partitions, perPartition });
  const sent: SentRecord[] = [];
  const from = Date.now();
  for (let p = 0; p < partitions; p++) {
    const headers: Header[] = [
      ['origin', 'kcat'],
      ['partition', String(p)],
    ];
    const records = planned.filter((r) => r.partition === p).map((r) => ({ ...r, headers }));
    await kcatProduce(bootstrap, topic, records, { partition: p, headers, ...settings });
    sent.push(...records);
  }
  return { sent, from, to: Date.now() };
}

for (const engine of engines) {
  const title = `kcat ${kcatVersion} through the gateway, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let gateway: RunningGateway;

    beforeAll(async () => {
      gateway = await startGateway({ engine: engine.fresh(), autoCreateTopics: false });
    });
    afterAll(async () => {
      await gateway?.stop();
    });

    it.each(['none', 'gzip', 'snappy', 'lz4', 'zstd'])('keyed records with headers, %s-compressed, come back intact and in order per partition', async (codec) => {
      const topic = uniqueTopic(`kcat-codec-${codec}`);
      await createTopic(gateway.bootstrap, topic, 3);
      const { sent, from, to } = await produceWithKcat(gateway.bootstrap, topic, 3, 30, { codec, acks: 'all' });
      const read = await kcatConsume(gateway.bootstrap, topic);
      // kcat stamps each record itself when it is produced.
      expectSameRecords(sent, read, { timestamps: { from, to } });
      expect(Math.min(...read.map((r) => r.offset)), 'a new topic starts at offset 0').toBe(0);
    });

    it.each(['0', '1', 'all'])('acks=%s: every record is stored, in order per partition', async (acks) => {
      const topic = uniqueTopic(`kcat-acks-${acks}`);
      await createTopic(gateway.bootstrap, topic, 2);
      const { sent, from, to } = await produceWithKcat(gateway.bootstrap, topic, 2, 40, { acks });
      const read = await kcatConsume(gateway.bootstrap, topic);
      expectSameRecords(sent, read, { timestamps: { from, to } });
    });

    it('Metadata (-L) for an unknown topic with auto-create off reports the topic unknown and creates nothing', async () => {
      const topic = uniqueTopic('kcat-unknown');
      // kcat -L runs a producer handle, which asks for auto-creation (allow.auto.create.topics defaults to true there).
      const metadata = await kcatMetadata(gateway.bootstrap, topic);
      const entry = metadata.topics.find((t) => t.topic === topic);
      expect(entry, `kcat -L -t ${topic} listed nothing for the topic: ${JSON.stringify(metadata)}`).toBeDefined();
      expect(entry!.error ?? '', 'the topic is reported unknown').toMatch(/unknown topic/i);
      expect(entry!.partitions).toEqual([]);
      const all = await kcatMetadata(gateway.bootstrap);
      expect(all.topics.map((t) => t.topic), 'the unknown topic was created').not.toContain(topic);
      expect(all.brokers.map((b) => b.name), 'brokers are listed at the advertised address').toEqual([gateway.bootstrap]);
    });

    it('finds offsets by timestamp with -Q, and consumes from a time with -o s@', async () => {
      const topic = uniqueTopic('kcat-times');
      await createTopic(gateway.bootstrap, topic, 1);
      // kcat stamps records with the wall clock, so two runs a little apart give two distinct times.
      await produceWithKcat(gateway.bootstrap, topic, 1, 10, {});
      const lastOfFirstRun = (await kcatConsume(gateway.bootstrap, topic)).at(-1)!;
      while (Date.now() <= lastOfFirstRun.timestamp) await new Promise((resolve) => setTimeout(resolve, 1));
      const { sent } = await produceWithKcat(gateway.bootstrap, topic, 1, 5, {});
      const all = await kcatConsume(gateway.bootstrap, topic);
      const firstOfSecondRun = all[10]!;
      expect(firstOfSecondRun.value).toBe(sent[0]!.value);

      expect(await kcatOffsetForTime(gateway.bootstrap, topic, 0, firstOfSecondRun.timestamp), '-Q at the second run\'s first timestamp').toBe(10);
      const fromTime = await kcatConsume(gateway.bootstrap, topic, { offset: `s@${firstOfSecondRun.timestamp}` });
      expect(fromTime.map((r) => r.offset)).toEqual([10, 11, 12, 13, 14]);
    });

    it('after DeleteRecords, consuming from an offset below the new start resumes at the start (auto.offset.reset=earliest)', async () => {
      const topic = uniqueTopic('kcat-delete-records');
      await createTopic(gateway.bootstrap, topic, 1);
      const { sent, from, to } = await produceWithKcat(gateway.bootstrap, topic, 1, 20, {});
      const admin = createAdmin(gateway.bootstrap);
      try {
        await adminCall((cb) => admin.deleteRecords([{ topic, partition: 0, offset: 8 }], { timeout: 10_000 }, cb));
      } finally {
        admin.disconnect();
      }
      const read = await kcatConsume(gateway.bootstrap, topic, { partition: 0, offset: '3', extra: { 'auto.offset.reset': 'earliest' } });
      expectSameRecords(sent.slice(8), read, { timestamps: { from, to } });
      expect(read[0]?.offset).toBe(8);
    });
  });
}
