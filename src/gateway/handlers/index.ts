// Every API handler the gateway serves, one file per API key. The server
// builds its dispatch table and ApiVersions from this list alone; adding a
// handler is one import and one entry below.
import type { ApiHandler } from '../handler.js';
import { apiVersions } from './api-versions.js';
import { fetch } from './fetch.js';
import { initProducerId } from './init-producer-id.js';
import { listOffsets } from './list-offsets.js';
import { metadata } from './metadata.js';
import { produce } from './produce.js';

export const handlers: readonly ApiHandler[] = [
  apiVersions,
  fetch,
  initProducerId,
  listOffsets,
  metadata,
  produce,
];
