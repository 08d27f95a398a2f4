/**
 * The web console: a page served at / and the JSON routes under
 * /console/api/ that it reads, all from the core, behind the HTTP API's
 * authentication and ACLs (../access.ts). docs/console.md says what each
 * view shows.
 */
import { registerConsoleAssets } from './assets.js';
import { registerConsoleClusterRoutes } from './cluster.js';
import type { ConsoleContext } from './context.js';
import { registerConsoleGroupRoutes } from './groups.js';
import { registerConsoleMessageRoutes } from './messages.js';
import { registerConsoleQueueRoutes } from './queues.js';
import { registerConsoleSecurityRoutes } from './security.js';
import { registerConsoleTopicRoutes } from './topics.js';
import { registerConsoleTransactionRoutes } from './transactions.js';

export { CORE_ONLY_SOURCES, type ConsoleCluster, type ConsoleNode, type ConsoleSources, type DescribedTopicConfig } from './sources.js';

export function registerConsole(context: ConsoleContext): void {
  registerConsoleAssets(context.app);
  registerConsoleClusterRoutes(context);
  registerConsoleTopicRoutes(context);
  registerConsoleMessageRoutes(context);
  registerConsoleGroupRoutes(context);
  registerConsoleTransactionRoutes(context);
  registerConsoleSecurityRoutes(context);
  registerConsoleQueueRoutes(context);
}
