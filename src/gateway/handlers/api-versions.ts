// ApiVersions: tells a client which API keys and versions this gateway serves.
//
// The list is the handler registry itself (ctx.apis), so nothing advertised
// lacks a handler and no handler goes unadvertised. Every version 0-4 is
// answered; a version above that never reaches this file: the server answers
// UNSUPPORTED_VERSION (35) with a v0 body listing the same APIs, which is how a
// newer client learns to step down (KIP-511).
//
// v3+: the tagged SupportedFeatures and FinalizedFeatures lists go out empty
// with FinalizedFeaturesEpoch -1: there is no feature-versioned metadata here,
// and clients read "empty" as "classic behaviour". The client software name and
// version a v3+ client sends are only logged at debug.
import { ApiVersions } from '../../../protocol/messages/index.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';

export const apiVersions: ApiHandler = {
  api: ApiVersions,
  versions: '0-4',
  async handle(request, ctx) {
    if (ctx.header.apiVersion >= 3) {
      ctx.log.debug({ software: request.clientSoftwareName, softwareVersion: request.clientSoftwareVersion }, 'client software');
    }
    return {
      errorCode: NONE,
      apiKeys: ctx.apis,
      throttleTimeMs: 0,
      supportedFeatures: [],
      finalizedFeaturesEpoch: -1n,
      finalizedFeatures: [],
      zkMigrationReady: false,
    };
  },
};
