/**
 * kcat (Debian's build, its own librdkafka inside) as a separate process:
 * produce (-P) with keys, headers, a codec and an acks setting; consume (-C)
 * from a start offset to the end of every partition, in a format that gives
 * partition, offset, timestamp, key, headers and value; metadata (-L -J); and
 * offset-by-timestamp queries (-Q).
 */
import { spawn } from 'node:child_process';
import type { Header, ReadRecord } from './records.js';

export interface KcatResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs kcat to completion; rejects only when it cannot be started or outlives `timeoutMs`. */
export function runKcat(args: string[], input = '', timeoutMs = 30_000): Promise<KcatResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('kcat', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => stdout.push(d));
    child.stderr.on('data', (d: Buffer) => stderr.push(d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kcat ${args.join(' ')} did not finish within ${timeoutMs} ms; stderr: ${Buffer.concat(stderr).toString().slice(-2000)}`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`kcat could not be started (is it installed?): ${e.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(stdout).toString(), stderr: Buffer.concat(stderr).toString() });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

function expectSuccess(result: KcatResult, what: string): void {
  if (result.code !== 0) throw new Error(`kcat ${what} exited with ${result.code}: ${result.stderr.trim().slice(-2000)}`);
}

export interface KcatProduceOptions {
  partition: number;
  /** Headers every record of this run carries (kcat's -H applies to the whole run). */
  headers?: Header[];
  /** none, gzip, snappy, lz4 or zstd. */
  codec?: string;
  /** 0, 1 or all (-1). */
  acks?: string;
  /** More -X settings. */
  extra?: Record<string, string>;
}

/**
 * Produces `key<TAB>value` lines to one partition. Keys and values must not
 * contain tabs or newlines. Resolves once kcat exits cleanly (after it has
 * flushed, so every record has its delivery report).
 */
export async function kcatProduce(bootstrap: string, topic: string, records: { key: string | null; value: string }[], options: KcatProduceOptions): Promise<KcatResult> {
  const args = ['-P', '-b', bootstrap, '-t', topic, '-p', String(options.partition), '-K', '\\t', '-m', '15'];
  for (const [name, value] of options.headers ?? []) args.push('-H', `${name}=${value}`);
  const settings: Record<string, string> = {
    'compression.codec': options.codec ?? 'none',
    'acks': options.acks ?? 'all',
    ...options.extra,
  };
  for (const [k, v] of Object.entries(settings)) args.push('-X', `${k}=${v}`);
  // kcat splits on the first key delimiter; a record with a null key needs no key column.
  const input = records.map((r) => (r.key === null ? `\t${r.value}` : `${r.key}\t${r.value}`)).join('\n') + '\n';
  const result = await runKcat(args, input);
  expectSuccess(result, `produce to ${topic}[${options.partition}]`);
  return result;
}

// ASCII unit and record separators: they cannot occur in the test's keys, values or headers.
const FIELD = '\\x1f';
const RECORD = '\\x1e';

export interface KcatConsumeOptions {
  partition?: number;
  /** beginning, end, an absolute offset, or s@<timestamp>. Default beginning. */
  offset?: string;
  /** Stop after this many records instead of at the end of the partitions. */
  count?: number;
  extra?: Record<string, string>;
  timeoutMs?: number;
}

/** Consumes from the start offset to the end of each partition (-e) and parses what kcat printed. */
export async function kcatConsume(bootstrap: string, topic: string, options: KcatConsumeOptions = {}): Promise<ReadRecord[]> {
  const format = ['%p', '%o', '%T', '%K', '%k', '%h', '%s'].join(FIELD) + RECORD;
  const args = ['-C', '-b', bootstrap, '-t', topic, '-o', options.offset ?? 'beginning', '-e', '-q', '-f', format, '-m', '15'];
  if (options.partition !== undefined) args.push('-p', String(options.partition));
  if (options.count !== undefined) args.push('-c', String(options.count));
  for (const [k, v] of Object.entries(options.extra ?? {})) args.push('-X', `${k}=${v}`);
  const result = await runKcat(args, '', options.timeoutMs ?? 30_000);
  expectSuccess(result, `consume from ${topic}`);
  return parseConsumed(result.stdout);
}

function parseConsumed(stdout: string): ReadRecord[] {
  const records: ReadRecord[] = [];
  for (const line of stdout.split('\x1e')) {
    if (line.trim() === '') continue;
    const fields = line.replace(/^\n/, '').split('\x1f');
    if (fields.length !== 7) throw new Error(`kcat printed a record this harness cannot parse: ${JSON.stringify(line)}`);
    const [partition, offset, timestamp, keyLength, key, headers, value] = fields as [string, string, string, string, string, string, string];
    records.push({
      partition: Number(partition),
      offset: Number(offset),
      timestamp: Number(timestamp),
      key: keyLength === '-1' ? null : key,
      headers: parseHeaders(headers),
      value,
    });
  }
  return records;
}

/** kcat's %h: `name=value` pairs separated by commas. */
function parseHeaders(text: string): Header[] {
  if (text === '') return [];
  return text.split(',').map((pair) => {
    const eq = pair.indexOf('=');
    return (eq < 0 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)]) as Header;
  });
}

export interface KcatMetadata {
  brokers: { id: number; name: string }[];
  topics: { topic: string; error?: string; partitions: { partition: number; leader: number; error?: string }[] }[];
}

/** kcat -L -J: the cluster's metadata as kcat sees it. */
export async function kcatMetadata(bootstrap: string, topic?: string, extra: Record<string, string> = {}): Promise<KcatMetadata> {
  const args = ['-L', '-J', '-b', bootstrap, '-m', '10'];
  if (topic) args.push('-t', topic);
  for (const [k, v] of Object.entries(extra)) args.push('-X', `${k}=${v}`);
  const result = await runKcat(args);
  expectSuccess(result, 'metadata');
  return JSON.parse(result.stdout) as KcatMetadata;
}

/** kcat -Q: the earliest offset whose timestamp is at or after `timestamp`, per partition, as kcat printed it. */
export async function kcatOffsetForTime(bootstrap: string, topic: string, partition: number, timestamp: number): Promise<number> {
  const result = await runKcat(['-Q', '-b', bootstrap, '-t', `${topic}:${partition}:${timestamp}`, '-m', '10']);
  expectSuccess(result, `offset query on ${topic}[${partition}]`);
  // kcat prints e.g. "topic [2] offset 17"
  const match = /\[\s*(\d+)\s*\]\s+offset\s+(-?\d+)/.exec(result.stdout);
  if (!match) throw new Error(`kcat -Q printed no offset: ${result.stdout.trim()} ${result.stderr.trim()}`);
  if (Number(match[1]) !== partition) throw new Error(`kcat -Q answered for partition ${match[1]}, asked ${partition}`);
  return Number(match[2]);
}
