/**
 * ApiVersions' feature levels (v3 and v4), compared for the features the
 * gateway serves: `group.version` (KIP-848), `share.version` (KIP-932) and `transaction.version`
 * (KIP-890 part 2), supported and finalized, as Kafka 4.4 answers with its
 * defaults. The features that describe a KRaft cluster's own metadata
 * (metadata.version, kraft.version, eligible.leader.replicas.version) and
 * those of protocols other suites own are left out of the observation, as is
 * the finalized features epoch (a count of metadata changes on Kafka).
 */
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import type { Scenario } from '../harness.js';
import { withRaw } from '../observe.js';

const SERVED = new Set(['group.version', 'share.version', 'transaction.version']);

const byName = (list: Message[] | undefined) => (list ?? []).filter((f) => SERVED.has(f.name as string)).sort((a, b) => String(a.name).localeCompare(String(b.name)));

const featuresScenario: Scenario = {
  name: 'ApiVersions: group.version and transaction.version, supported and finalized',
  async run(ctx) {
    return withRaw(ctx, async (raw) => {
      const out: Record<string, unknown> = {};
      for (const version of [3, 4]) {
        const a = await raw.request(ApiKey.ApiVersions, version, { clientSoftwareName: 'differential', clientSoftwareVersion: '1.0' });
        out[`v${version}`] = { supported: byName(a.supportedFeatures as Message[]), finalized: byName(a.finalizedFeatures as Message[]) };
      }
      return out;
    });
  },
};

export const FEATURE_SCENARIOS: Scenario[] = [featuresScenario];
