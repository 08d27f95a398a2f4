/**
 * A share group's configs (Kafka's group configs, set with
 * IncrementalAlterConfigs on a GROUP resource): what is set is kept in the
 * core's KV store under a namespace of its own, so every core and gateway
 * reads the same, in both engines; what is not set is Kafka 4.4's default.
 */
import type { EngineKv } from '../../engine.js';
import { DEFAULT_SHARE_GROUP_CONFIG, type ShareGroupConfig } from './types.js';

/** The KV namespace the configs are kept in (a name Queen's HTTP API cannot write: it starts with "__"). */
export const CONFIG_NAMESPACE = '__share_group_configs';

type Key = keyof ShareGroupConfig;

/** Each key's check: the value as it is kept, or a sentence why not. Bounds are Kafka 4.4's broker defaults for the group.share.* ranges. */
const PARSE: Record<Key, (v: string) => number | string | Error> = {
  'share.record.lock.duration.ms': (v) => integerIn(v, 1000, 3_600_000),
  'share.delivery.count.limit': (v) => integerIn(v, 2, 10),
  'share.auto.offset.reset': (v) => (v === 'latest' || v === 'earliest' ? v : new Error(`share.auto.offset.reset must be latest or earliest, not ${v}.`)),
  'share.isolation.level': (v) => (v === 'read_uncommitted' || v === 'read_committed' ? v : new Error(`share.isolation.level must be read_uncommitted or read_committed, not ${v}.`)),
  'share.session.timeout.ms': (v) => integerIn(v, 1000, 3_600_000),
  'share.heartbeat.interval.ms': (v) => integerIn(v, 100, 3_600_000),
};

function integerIn(v: string, min: number, max: number): number | Error {
  const n = Number(v);
  return /^-?\d+$/.test(v.trim()) && n >= min && n <= max ? n : new Error(`must be an integer from ${min} to ${max}, not ${v}.`);
}

export function isShareConfigKey(key: string): key is Key {
  return Object.hasOwn(PARSE, key);
}

export async function readShareConfig(kv: EngineKv, group: string): Promise<{ config: ShareGroupConfig; set: Key[] }> {
  const entry = await kv.get({ ns: CONFIG_NAMESPACE, key: group });
  const stored = (entry?.value ?? {}) as Partial<ShareGroupConfig>;
  return { config: { ...DEFAULT_SHARE_GROUP_CONFIG, ...stored }, set: Object.keys(stored).filter(isShareConfigKey) };
}

/** Applies changes (null removes a key) unless one is bad: then nothing changes and the answer says why. */
export async function alterShareConfig(kv: EngineKv, group: string, changes: Record<string, string | null>, validateOnly: boolean): Promise<{ error: string | null }> {
  const entry = await kv.get({ ns: CONFIG_NAMESPACE, key: group });
  const next: Record<string, unknown> = { ...((entry?.value ?? {}) as Record<string, unknown>) };
  for (const [key, value] of Object.entries(changes)) {
    if (!isShareConfigKey(key)) return { error: `Unknown group config name: ${key}.` };
    if (value === null) {
      delete next[key];
      continue;
    }
    const parsed = PARSE[key](value);
    if (parsed instanceof Error) return { error: parsed.message.startsWith('share.') ? parsed.message : `${key} ${parsed.message}` };
    next[key] = parsed;
  }
  if (validateOnly) return { error: null };
  if (Object.keys(next).length === 0) await kv.delete({ ns: CONFIG_NAMESPACE, key: group });
  else await kv.put({ ns: CONFIG_NAMESPACE, key: group, value: next, lifetime: { forever: true } });
  return { error: null };
}
