import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Apache Kafka's message specs (`../shared/kafka-protocol/message/*.json`),
 * read at test time from beside the checkout. They are JSON with `//`
 * comments; nothing from them is copied into the project.
 */

export interface SpecField {
  name: string;
  type: string;
  versions: string;
  nullableVersions?: string;
  default?: string | number | boolean;
  ignorable?: boolean;
  mapKey?: boolean;
  tag?: number;
  taggedVersions?: string;
  fields?: SpecField[];
}

export interface SpecStruct {
  name: string;
  versions: string;
  fields: SpecField[];
}

export interface SpecMessage {
  apiKey: number;
  type: 'request' | 'response';
  name: string;
  validVersions: string;
  flexibleVersions: string;
  fields: SpecField[];
  commonStructs?: SpecStruct[];
}

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Where the specs live: `../shared/kafka-protocol/message` relative to the project root. */
export const specDirectory = join(projectRoot, '..', 'shared', 'kafka-protocol', 'message');

export function specsAvailable(): boolean {
  return existsSync(specDirectory);
}

/** Removes `//` comments, leaving `//` inside string literals alone. */
export function stripLineComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else {
      out += c;
    }
  }
  return out;
}

/**
 * Versions Kafka added after these specs (October 2024) with the same fields
 * as the version before them, as the kafka-clients 4.x jar's specs say
 * ("Version 12 is the same as version 11 (KIP-890)"); the conformance test
 * checks each against the jar where the jar is on the machine.
 */
export const SAME_FIELDS_AS_BEFORE: Readonly<Record<string, number>> = {
  ProduceRequest: 12,
  ProduceResponse: 12,
  TxnOffsetCommitRequest: 5,
  TxnOffsetCommitResponse: 5,
};

/** Loads one message spec by Kafka's message name (e.g. "ProduceRequest"), its range raised by SAME_FIELDS_AS_BEFORE. */
export function loadSpec(messageName: string): SpecMessage {
  const text = FROM_KAFKA_4_4.test(messageName) ? kafka44Spec(messageName) : readFileSync(join(specDirectory, `${messageName}.json`), 'utf8');
  const spec = JSON.parse(stripLineComments(text)) as SpecMessage;
  const newer = SAME_FIELDS_AS_BEFORE[messageName];
  if (newer !== undefined) spec.validVersions = spec.validVersions.replace(/-\d+$/, `-${newer}`);
  return spec;
}

/** One message spec from a kafka-clients jar (common/message/NAME.json), for the versions newer than these specs. */
export function loadJarSpec(jar: string, messageName: string): SpecMessage {
  const text = execFileSync('unzip', ['-p', jar, `common/message/${messageName}.json`], { encoding: 'utf8' });
  return JSON.parse(stripLineComments(text)) as SpecMessage;
}

/**
 * Messages whose served versions are newer than the shared specs (the share
 * group APIs left early access in Kafka 4.1, bumping their versions; the
 * streams group APIs are newer than them): read
 * from the kafka-clients 4.4 jar in the local Maven repository, where
 * scripts/apache-kafka-fetch.sh puts it.
 */
const FROM_KAFKA_4_4 = /^(Share(GroupHeartbeat|GroupDescribe|Fetch|Acknowledge)|(Describe|Alter|Delete)ShareGroupOffsets|StreamsGroup(Heartbeat|Describe))(Request|Response)$/;

const kafka44Jar = join(homedir(), '.m2/repository/org/apache/kafka/kafka-clients/4.4.0/kafka-clients-4.4.0.jar');

function kafka44Spec(messageName: string): string {
  if (!existsSync(kafka44Jar)) throw new Error(`${messageName}: its Kafka 4.4 spec is read from ${kafka44Jar}, which is absent (npm run apache-kafka fetches it)`);
  return execFileSync('unzip', ['-p', kafka44Jar, `common/message/${messageName}.json`], { encoding: 'utf8' });
}
