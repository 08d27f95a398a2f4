/**
 * Kafka Streams with `group.protocol=streams` (KIP-1071, the broker-side
 * rebalance protocol): the word count of test/frameworks/kafka-streams.test.ts
 * (exactly_once_v2, a repartition topic and a changelogged store, SIGKILLed
 * mid-stream and started again) against Apache Kafka and the gateway on
 * every engine. Here the coordinator turns the application's topology into
 * tasks and assigns them (StreamsGroupHeartbeat), and creates the internal
 * topics itself; the output read read_committed must hold, for each word,
 * exactly the counts 1, 2, ... n in order, as Apache Kafka's does. While the
 * application runs, ListGroups lists its group as a streams group and
 * StreamsGroupDescribe shows its member running every task.
 *
 * In `npm test` only the gateway on the memory engine runs (about a minute:
 * the killed instance's tasks wait for its 45 s session timeout, on Kafka
 * as here); `npm run test:streams-protocol` runs Apache Kafka and the
 * PostgreSQL engine too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import { apacheKafkaInstall, startApacheKafka } from '../support/apache-kafka.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway } from '../support/gateway.js';
import { RawConnection } from '../support/raw-connection.js';
import { expectedWordCountOutput, runWordCount, type Server } from '../support/streams-wordcount.js';

const engines = await engineMatrix();
afterAll(releaseEngines);
const kafkaVersion = (await apacheKafkaInstall()).version;

interface Target {
  name: string;
  skipReason: string | null;
  start(): Promise<Server & { port: number }>;
}

const portOf = (bootstrap: string) => Number(bootstrap.split(',')[0]!.split(':').pop());
const full = process.env['STREAMS_PROTOCOL_FULL'] === '1';
const allTargets: Target[] = [
  { name: `Apache Kafka ${kafkaVersion}`, skipReason: null, start: async () => { const k = await startApacheKafka({ autoCreateTopics: false }); return Object.assign(k, { port: portOf(k.bootstrap) }); } },
  ...engines.map(
    (engine): Target => ({
      name: `the gateway, ${engine.name} engine`,
      skipReason: engine.skipReason,
      start: async () => { const g = await startGateway({ engine: engine.fresh(), autoCreateTopics: false }); return Object.assign(g, { port: portOf(g.bootstrap) }); },
    }),
  ),
];
const targets = full ? allTargets : allTargets.filter((t) => t.name.endsWith('memory engine'));

/** What a watcher saw of the application's group while it ran: ListGroups' type, and the tasks its members ran whenever StreamsGroupDescribe showed it Stable. */
interface Seen {
  groupType?: string;
  stableTasks: Set<number>;
}

/** Polls ListGroups (v5, type streams) and StreamsGroupDescribe until stopped, keeping the last view of a group with a member. */
function watchStreamsGroups(port: number): { seen: Seen; stop(): Promise<void> } {
  const seen: Seen = { stableTasks: new Set() };
  let running = true;
  const loop = (async () => {
    while (running) {
      const raw = await RawConnection.open(port).catch(() => null);
      if (raw) {
        try {
          const listed = await raw.request(ApiKey.ListGroups, 5, { statesFilter: [], typesFilter: ['streams'] });
          const ids = listed.groups.map((g: { groupId: string }) => g.groupId).filter((id: string) => id.startsWith('wordcount'));
          if (ids.length > 0) {
            const described = await raw.request(ApiKey.StreamsGroupDescribe, 0, { groupIds: ids, includeAuthorizedOperations: false });
            for (const g of described.groups) {
              if (g.members.length === 0) continue;
              seen.groupType = listed.groups.find((l: { groupId: string }) => l.groupId === g.groupId)?.groupType;
              // Between a member's removal and the next heartbeat the group is Assigning, on Kafka as here: only Stable views count.
              if (g.groupState !== 'Stable') continue;
              seen.stableTasks.add(g.members.reduce((n: number, m: { assignment: { activeTasks: { partitions: number[] }[] } }) => n + m.assignment.activeTasks.reduce((k, t) => k + t.partitions.length, 0), 0));
            }
          }
        } catch {
          // A server starting or stopping: look again.
        } finally {
          raw.destroy();
        }
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return { seen, stop: async () => { running = false; await loop; } };
}

for (const target of targets) {
  const title = `Kafka Streams ${kafkaVersion} with group.protocol=streams against ${target.name}` + (target.skipReason ? ` (skipped: ${target.skipReason})` : '');
  describe.skipIf(target.skipReason !== null)(title, () => {
    let workDir: string;
    let server: Server & { port: number };
    beforeAll(async () => {
      workDir = mkdtempSync(join(tmpdir(), 'queen-streams-protocol-'));
      server = await target.start();
    }, 180_000);
    afterAll(async () => {
      await server?.stop();
      if (!process.env["KEEP_STREAMS_LOGS"]) rmSync(workDir, { recursive: true, force: true });
    });

    it('a word count with exactly_once_v2, SIGKILLed mid-stream and restarted, commits every count once, in order; its group is a streams group running every task', async () => {
      const watcher = watchStreamsGroups(server.port);
      try {
        expect(await runWordCount(server, workDir, { 'group.protocol': 'streams' })).toEqual(expectedWordCountOutput());
      } finally {
        await watcher.stop();
      }
      // Two subtopologies (split and count, through the repartition topic) of two partitions each, all running whenever the group is Stable.
      expect(watcher.seen).toEqual({ groupType: 'streams', stableTasks: new Set([4]) });
    }, 300_000);
  });
}
