/**
 * The differential harness itself, without a broker: a field that differs
 * fails unless the table lists it, a listed difference that no longer occurs
 * fails as stale, and docs/differences.md ("Differences from Apache Kafka")
 * has a row for every entry of ./differences.ts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DELIBERATE_DIFFERENCES, type DeliberateDifference } from './differences.js';
import { diffObservations, judge, Normaliser } from './harness.js';

const entry: DeliberateDifference = {
  scenario: 's',
  paths: ['a.listed', 'list[*].note', 'deep.**'],
  behaviour: 'b',
  kafka: 'k',
  gateway: 'g',
  why: 'w',
};

describe('differential harness', () => {
  it('reports every differing leaf by path, array lengths included', () => {
    expect(diffObservations({ a: 1, b: [1, 2], c: { d: 'x' } }, { a: 1, b: [1], c: { d: 'y' }, e: true })).toEqual([
      { path: 'b.length', reference: 2, candidate: 1 },
      { path: 'c.d', reference: 'x', candidate: 'y' },
      { path: 'e', reference: undefined, candidate: true },
    ]);
  });

  it('passes a listed difference, fails an unlisted one, and names a listed one that no longer occurs', () => {
    const verdict = judge('s', 'memory', { a: { listed: 1, other: 1 }, list: [{ note: 'x' }] }, { a: { listed: 2, other: 3 }, list: [{ note: 'y' }] }, [entry]);
    expect(verdict.unexplained).toEqual([{ path: 'a.other', reference: 1, candidate: 3 }]);
    expect(verdict.explained).toEqual([entry]);
    expect(judge('s', 'memory', { a: { listed: 1 } }, { a: { listed: 1 } }, [entry]).stale).toEqual([entry]);
    // An entry for another scenario or engine explains nothing here.
    expect(judge('t', 'memory', { a: { listed: 1 } }, { a: { listed: 2 } }, [entry]).unexplained).toHaveLength(1);
    expect(judge('s', 'memory', { a: { listed: 1 } }, { a: { listed: 2 } }, [{ ...entry, engines: ['postgres'] }]).unexplained).toHaveLength(1);
  });

  it('normalises only what two clusters cannot share, and keeps a wrong value visible', () => {
    const n = new Normaliser({ name: 'memory', bootstrap: '127.0.0.1:1', host: '127.0.0.1', port: 1, nodeId: 0 });
    const a = '6f1c1e0e-3b7a-4c39-9d55-8f2f1c0a9b11';
    const b = '0b1d3b1e-0000-4000-8000-000000000001';
    expect([n.uuid(a), n.uuid(b), n.uuid(a), n.uuid('00000000-0000-0000-0000-000000000000')]).toEqual(['<uuid#1>', '<uuid#2>', '<uuid#1>', '00000000-0000-0000-0000-000000000000']);
    expect(n.text(`client-${a}`)).toBe('client-<uuid#1>');
    expect([n.nodeId(0), n.nodeId(5), n.port(1), n.port(2), n.clusterId('abc'), n.clusterId('')]).toEqual(['<node-id>', 5, '<port>', 2, '<cluster-id>', '']);
    expect([n.serverTime(Date.now()), n.serverTime(1_000), n.serverTime(-1)]).toEqual(['<server-time>', 1_000, -1]);
  });
});

describe('docs/differences.md lists every deliberate difference', () => {
  const section = readFileSync(new URL('../../docs/differences.md', import.meta.url), 'utf8');
  it('has the page', () => {
    expect(section).toContain('# Differences from Apache Kafka');
  });
  for (const behaviour of new Set(DELIBERATE_DIFFERENCES.map((d) => d.behaviour))) {
    it(behaviour, () => {
      const d = DELIBERATE_DIFFERENCES.find((x) => x.behaviour === behaviour)!;
      expect(section, 'the docs/differences.md row: behaviour | Kafka | gateway | why').toContain(`| ${d.behaviour} | ${d.kafka} | ${d.gateway} | ${d.why} |`);
    });
  }
});
