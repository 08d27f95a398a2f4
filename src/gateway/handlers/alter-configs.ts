// AlterConfigs: replaces topics' configs wholesale. As in Kafka, the configs
// given become the topic's whole set: every alterable key left out returns to
// its default. (IncrementalAlterConfigs changes single keys; it shares the
// per-resource loop in ../config-resources.ts.)
//
// Choices:
// - Keys and values go through src/topic-configs/: every Kafka topic
//   config, with Kafka's validation. Unknown keys and bad values answer
//   INVALID_CONFIG naming the key; a null value or a
//   key given twice, INVALID_REQUEST; nothing changes for that resource.
// - Only TOPIC resources can change. BROKER configs are fixed at start (flags
//   and environment), so altering them answers INVALID_REQUEST, as do other
//   resource types and a resource named twice in one request.
// - ValidateOnly checks everything and changes nothing.
// - queen.dedup.window.seconds is not a Kafka key: a replace leaves it alone.
//
// Versions: 0-2 differ only in encoding (flexible from v2).
//
// ACLs: ALTER_CONFIGS on the topic (else TOPIC_AUTHORIZATION_FAILED) or,
// for broker configs, on the cluster (else CLUSTER_AUTHORIZATION_FAILED),
// before anything else is said of the resource.
import { AlterConfigs } from '../../../protocol/messages/index.js';
import { alterResources } from '../config-resources.js';
import type { ApiHandler } from '../handler.js';
import { replacedTopicConfig } from '../../topic-configs/index.js';

export const alterConfigs: ApiHandler<typeof AlterConfigs> = {
  api: AlterConfigs,
  versions: '0-2',
  handle(request, ctx) {
    return alterResources<{ name: string; value: string | null }>(ctx, request.resources, request.validateOnly, (_current, entries) =>
      replacedTopicConfig(entries),
    );
  },
};
