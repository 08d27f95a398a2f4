/**
 * Group configs (Kafka's GROUP config resource, type 32), as
 * DescribeConfigs and IncrementalAlterConfigs serve them: the share group
 * configs the core keeps (src/core/groups/share/config.ts), each set value
 * as GROUP_CONFIG, else Kafka 4.4's default as DEFAULT_CONFIG. SET sets,
 * DELETE returns a key to its default; APPEND and SUBTRACT answer
 * INVALID_CONFIG (no group config is a list). Describing needs
 * DESCRIBE_CONFIGS on the group, altering ALTER_CONFIGS, else
 * GROUP_AUTHORIZATION_FAILED.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { DENIED_CODE } from '../access/acl-operations.js';
import { ConfigOperation, ConfigSource, ConfigType, type DescribedConfig, type DescribeOptions } from '../topic-configs/index.js';
import type { HandlerContext } from './handler.js';
import { kafkaErrorOf, NONE } from './kafka-errors.js';

export const GROUP_RESOURCE = 32;
/** Kafka's ConfigSource for a value set on the group. */
const GROUP_CONFIG_SOURCE = 8;

const DOCUMENTATION: Record<string, [number, string]> = {
  'share.auto.offset.reset': [ConfigType.STRING, 'Where a share-partition starts when the group has no state for it: latest or earliest.'],
  'share.delivery.count.limit': [ConfigType.INT, 'Deliveries of a record before it is archived instead of delivered again.'],
  'share.heartbeat.interval.ms': [ConfigType.INT, 'How often share group members heartbeat.'],
  'share.isolation.level': [ConfigType.STRING, 'read_uncommitted, or read_committed: records of open or aborted transactions are not delivered.'],
  'share.record.lock.duration.ms': [ConfigType.INT, 'How long a member holds an acquired record before it is delivered again.'],
  'share.session.timeout.ms': [ConfigType.INT, 'How long a silent share group member stays a member.'],
};

export async function describeGroupConfigs(ctx: HandlerContext, group: string, options: Required<DescribeOptions>) {
  const refuse = (errorCode: number, errorMessage: string) => ({ errorCode, errorMessage, resourceType: GROUP_RESOURCE, resourceName: group, configs: [] });
  if (!ctx.access.allows('DESCRIBE_CONFIGS', 'GROUP', group)) return refuse(DENIED_CODE.GROUP, `Not authorized to DESCRIBE_CONFIGS of group '${group}'.`);
  try {
    const { config, set } = await ctx.core.describeShareGroupConfig({ group });
    const wanted = options.keys ? new Set(options.keys) : null;
    const configs: DescribedConfig[] = Object.entries(config)
      .filter(([name]) => !wanted || wanted.has(name))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, value]) => {
        const source = set.includes(name as never) ? GROUP_CONFIG_SOURCE : ConfigSource.DEFAULT_CONFIG;
        const [type, documentation] = DOCUMENTATION[name] ?? [ConfigType.STRING, ''];
        return {
          name, value: String(value), readOnly: false, isDefault: source === ConfigSource.DEFAULT_CONFIG, configSource: source, isSensitive: false,
          synonyms: options.includeSynonyms ? [{ name, value: String(value), source }] : [], configType: type, documentation: options.includeDocumentation ? documentation : null,
        };
      });
    return { errorCode: NONE, errorMessage: null, resourceType: GROUP_RESOURCE, resourceName: group, configs };
  } catch (e) {
    const { errorCode, errorMessage } = kafkaErrorOf(e);
    return refuse(errorCode, errorMessage);
  }
}

export async function alterGroupConfigs(ctx: HandlerContext, group: string, entries: { name: string; configOperation: number; value: string | null }[], validateOnly: boolean) {
  const refuse = (errorCode: number, errorMessage: string) => ({ errorCode, errorMessage, resourceType: GROUP_RESOURCE, resourceName: group });
  if (!ctx.access.allows('ALTER_CONFIGS', 'GROUP', group)) return refuse(DENIED_CODE.GROUP, `Not authorized to ALTER_CONFIGS of group '${group}'.`);
  const changes: Record<string, string | null> = {};
  for (const e of entries) {
    if (e.configOperation === ConfigOperation.SET) changes[e.name] = e.value ?? '';
    else if (e.configOperation === ConfigOperation.DELETE) changes[e.name] = null;
    else return refuse(ErrorCode.INVALID_CONFIG, `${e.name} is not a list: APPEND and SUBTRACT apply to list configs only.`);
  }
  try {
    const { error } = await ctx.core.alterShareGroupConfig({ group, changes, validateOnly });
    if (error !== null) return refuse(ErrorCode.INVALID_CONFIG, error);
    if (!validateOnly) ctx.log.info({ group, changes }, 'group config altered');
    return { errorCode: NONE, errorMessage: null, resourceType: GROUP_RESOURCE, resourceName: group };
  } catch (e) {
    const { errorCode, errorMessage } = kafkaErrorOf(e);
    return refuse(errorCode, errorMessage);
  }
}
