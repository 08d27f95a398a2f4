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
// v3+: the tagged SupportedFeatures and FinalizedFeatures lists name one
// feature, `group.version` at level 1 (KIP-848's consumer group protocol is
// served: ConsumerGroupHeartbeat and ConsumerGroupDescribe), as Kafka 4.4
// finalizes it; other features (metadata.version, transaction.version, ...)
// describe a KRaft cluster's metadata log, which there is none of here. A
// feature whose lowest level is 0 is advertised from 1 before v4, as Kafka
// does, because older clients refuse a 0 there (KAFKA-17011). The client
// software name and version a v3+ client sends are only logged at debug.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ApiVersions } from '../../../protocol/messages/index.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';

/** KIP-511's rule for ClientSoftwareName and ClientSoftwareVersion. */
/** The features served, with the lowest and highest level; each is finalized at its highest. */
const FEATURES = [{ name: 'group.version', minVersion: 0, maxVersion: 1 }, { name: 'share.version', minVersion: 0, maxVersion: 2 }] as const;

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
    return {
      errorCode: NONE,
      apiKeys: ctx.apis,
      throttleTimeMs: 0,
      supportedFeatures: FEATURES.map((f) => ({ name: f.name, minVersion: ctx.header.apiVersion >= 4 ? f.minVersion : Math.max(1, f.minVersion), maxVersion: f.maxVersion })),
      finalizedFeaturesEpoch: 0n,
      finalizedFeatures: FEATURES.map((f) => ({ name: f.name, minVersionLevel: f.maxVersion, maxVersionLevel: f.maxVersion })),
      zkMigrationReady: false,
    };
  },
};
