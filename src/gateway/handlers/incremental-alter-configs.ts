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
// - GROUP (32) resources: the share group configs (../group-configs.ts).
//
// Versions: 0-1 differ only in encoding (flexible from v1).
import { IncrementalAlterConfigs } from '../../../protocol/messages/index.js';
import { alterResources } from '../config-resources.js';
import type { ApiHandler } from '../handler.js';
import { alterGroupConfigs, GROUP_RESOURCE } from '../group-configs.js';
import { incrementalTopicConfig, type ConfigChange } from '../../topic-configs/index.js';

export const incrementalAlterConfigs: ApiHandler<typeof IncrementalAlterConfigs> = {
  api: IncrementalAlterConfigs,
  versions: '0-1',
  async handle(request, ctx) {
    const groups = request.resources.filter((r) => r.resourceType === GROUP_RESOURCE);
    const others = await alterResources<ConfigChange>(ctx, request.resources.filter((r) => r.resourceType !== GROUP_RESOURCE), request.validateOnly, incrementalTopicConfig);
    const altered = await Promise.all(groups.map((r) => alterGroupConfigs(ctx, r.resourceName, r.configs, request.validateOnly)));
    // Answered in the request's order.
    return { ...others, responses: request.resources.map((r) => (r.resourceType === GROUP_RESOURCE ? altered[groups.indexOf(r)]! : others.responses.shift()!)) };
  },
};
