// ApiVersions: tells a client which API keys and versions this gateway serves.
//
// The list is the handler registry itself (ctx.apis), so nothing advertised
// lacks a handler and no handler goes unadvertised. Every version 0-4 is
// answered; a version above that never reaches this file: the server answers
// UNSUPPORTED_VERSION (35) with a v0 body listing the same APIs, which is how a
// newer client learns to step down (KIP-511).
//
// v3+: a client software name or version Kafka's pattern refuses (letters,
// digits, '-' and '.', starting and ending with a letter or digit; KIP-511)
// answers INVALID_REQUEST with no API list, as Kafka's broker does.
//
// v3+: the tagged SupportedFeatures and FinalizedFeatures lists name the
// features built here, as Kafka 4.4 names them: `group.version` 0-1,
// finalized at 1 (KIP-848's consumer group protocol: ConsumerGroupHeartbeat
// and ConsumerGroupDescribe), `share.version` 0-2, finalized at 2 (KIP-932's
// share groups), `streams.version` 0-1, finalized at 1 (KIP-1071's streams
// groups: StreamsGroupHeartbeat and StreamsGroupDescribe), and
// `transaction.version` 0-2, finalized at
// --transaction-version (default 2, as a new Kafka 4 cluster; 2 is KIP-890
// part 2: Produce v12, TxnOffsetCommit v5 and EndTxn v5 with an epoch bump per
// transaction). Kafka leaves a feature finalized at level 0 out of the
// finalized list, and so does this. Other features (metadata.version,
// kraft.version, ...) describe a KRaft cluster's metadata log, which there is
// none of here. Before v4 a feature whose lowest level is 0 is left out of
// the supported list, as Kafka 4.4 leaves it out, because older clients
// refuse a 0 there (KAFKA-17011); the finalized list is the same at v3.
// The client software name and version a v3+ client sends are only logged at
// debug.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ApiVersions } from '../../../protocol/messages/index.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { NONE } from '../kafka-errors.js';

/** A feature served: its lowest and highest level, and the level it is finalized at. */
interface Feature {
  name: string;
  minVersion: number;
  maxVersion: number;
  finalized: number;
}

/** Kafka 4's level on a new cluster. */
const DEFAULT_TRANSACTION_VERSION = 2;

function featuresOf(settings: HandlerContext['settings']): Feature[] {
  return [
    { name: 'group.version', minVersion: 0, maxVersion: 1, finalized: 1 },
    { name: 'share.version', minVersion: 0, maxVersion: 2, finalized: 2 },
    { name: 'streams.version', minVersion: 0, maxVersion: 1, finalized: 1 },
    { name: 'transaction.version', minVersion: 0, maxVersion: 2, finalized: settings.transactionVersion ?? DEFAULT_TRANSACTION_VERSION },
  ];
}

/** KIP-511's rule for ClientSoftwareName and ClientSoftwareVersion. */
const SOFTWARE_NAME_OR_VERSION = /^[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?$/;

export const apiVersions: ApiHandler<typeof ApiVersions> = {
  api: ApiVersions,
  versions: '0-4',
  async handle(request, ctx) {
    if (ctx.header.apiVersion >= 3) {
      const software = { software: request.clientSoftwareName, softwareVersion: request.clientSoftwareVersion };
      if (!SOFTWARE_NAME_OR_VERSION.test(software.software) || !SOFTWARE_NAME_OR_VERSION.test(software.softwareVersion)) {
        ctx.log.info(software, 'ApiVersions refused: the client software name and version must be letters, digits, "-" and ".", starting and ending with a letter or digit');
        return { errorCode: ErrorCode.INVALID_REQUEST, apiKeys: [], throttleTimeMs: 0 };
      }
      ctx.log.debug(software, 'client software');
    }
    const features = featuresOf(ctx.settings);
    return {
      errorCode: NONE,
      apiKeys: ctx.apis,
      throttleTimeMs: 0,
      supportedFeatures: features.filter((f) => ctx.header.apiVersion >= 4 || f.minVersion > 0).map((f) => ({ name: f.name, minVersion: f.minVersion, maxVersion: f.maxVersion })),
      finalizedFeaturesEpoch: 0n,
      finalizedFeatures: features.filter((f) => f.finalized > 0).map((f) => ({ name: f.name, minVersionLevel: f.finalized, maxVersionLevel: f.finalized })),
      zkMigrationReady: false,
    };
  },
};
