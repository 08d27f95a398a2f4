// IncrementalAlterConfigs: changes single topic config keys, leaving the
// others as they are (what kafka-configs.sh and modern admin clients use).
//
// Choices:
// - SET gives a key a value; DELETE returns it to its default (deleting a
//   name that is no config changes nothing, as in Kafka).
// - APPEND and SUBTRACT apply to list keys only (cleanup.policy, the
//   throttled-replica lists), from the current value or the default; on any
//   other key they answer INVALID_CONFIG.
// - Keys, values, resource types and ValidateOnly behave as in AlterConfigs
//   (./alter-configs.ts), whose per-resource loop (../config-resources.ts)
//   this handler shares.
//
// Versions: 0-1 differ only in encoding (flexible from v1).
import { IncrementalAlterConfigs } from '../../../protocol/messages/index.js';
import { alterResources } from '../config-resources.js';
import type { ApiHandler } from '../handler.js';
import { incrementalTopicConfig, type ConfigChange } from '../../topic-configs/index.js';

export const incrementalAlterConfigs: ApiHandler<typeof IncrementalAlterConfigs> = {
  api: IncrementalAlterConfigs,
  versions: '0-1',
  handle(request, ctx) {
    return alterResources<ConfigChange>(ctx, request.resources, request.validateOnly, incrementalTopicConfig);
  },
};
