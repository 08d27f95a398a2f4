// Every API handler the gateway serves, one file per API key. The server
// builds its dispatch table and ApiVersions from this list alone; adding a
// handler is one import and one entry below.
import type { ApiHandler } from '../handler.js';
import { apiVersions } from './api-versions.js';

export const handlers: readonly ApiHandler[] = [
  apiVersions,
];
