/**
 * The client matrix's bounded in-suite form (the whole one is `npm run
 * compat`, docs/compatibility.md): three clients in three languages —
 * kafkajs, confluent-kafka for Python and kcat — run their scenario programs
 * at once against one gateway on the memory engine. Every step each client
 * has must pass; a step the client lacks, or that the gateway does not serve
 * (share groups), is reported unsupported with its reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENTS, toolchains, type Toolchains } from './clients.js';
import { runScenario, startTarget, type Target } from './matrix.js';

const CHOSEN = ['kafkajs', 'confluent-kafka', 'kcat'];
const clients = CLIENTS.filter((c) => CHOSEN.includes(c.name));

describe('client matrix, a few clients on the memory engine', () => {
  let target: Target;
  let tools: Toolchains;

  beforeAll(async () => {
    tools = await toolchains(clients);
    target = await startTarget('gateway-memory');
  }, 600_000);
  afterAll(async () => {
    await target?.stop();
  });

  it('kafkajs, confluent-kafka and kcat pass every step they have', { timeout: 300_000 }, async () => {
    const runs = await Promise.all(clients.map((client) => runScenario(client, tools, target, 240_000)));
    const failed = runs.flatMap((run) => run.steps.filter((s) => s.status === 'fail').map((s) => `${run.client} ${s.step}: ${s.detail}`));
    expect(failed, 'failed steps').toEqual([]);
    const passed = (client: string) => runs.find((r) => r.client === client)!.steps.filter((s) => s.status === 'pass').map((s) => s.step);
    // What a user of each client would notice: the steps it has all worked.
    expect(passed('confluent-kafka')).toEqual(expect.arrayContaining(['produce-zstd', 'group-of-two', 'member-leaves', 'transactions', 'kip848']));
    expect(passed('kafkajs')).toEqual(expect.arrayContaining(['create-topic', 'produce-gzip', 'describe-group', 'list-offsets', 'transactions']));
    expect(passed('kcat')).toEqual(expect.arrayContaining(['produce-lz4', 'group-of-two', 'member-leaves', 'transactions']));
  });
});
