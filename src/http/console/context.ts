import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core/core.js';
import type { Need, RouteAccess, RouteNeeds } from '../access.js';
import type { ConsoleSources } from './sources.js';

/** What every console route file is given. */
export interface ConsoleContext {
  app: FastifyInstance;
  core: Core;
  sources: ConsoleSources;
}

/**
 * A console route's access: what it needs (the ACLs its Kafka counterpart
 * needs), and a 401 without a browser's password dialog: the page asks for
 * credentials itself.
 */
export const consoleAccess = (needs: RouteNeeds): RouteAccess => ({ needs, challenge: false });

/** One operation on a topic or a group, for the listings that show only what the principal may see. */
export const onTopic = (operation: Need['operation'], name: string): Need => ({ operation, type: 'TOPIC', name });
export const onGroup = (operation: Need['operation'], name: string): Need => ({ operation, type: 'GROUP', name });
