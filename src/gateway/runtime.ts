/** What the connections of a gateway share, and what those of one listener share. */
import type { Logger } from 'pino';
import type { Core } from '../core/index.js';
import type { Authorizer } from '../access/authorizer.js';
import type { GatewaySettings } from './handler.js';
import type { ServerLimits } from './limits.js';
import type { SecurityProtocol } from './listeners.js';
import type { QuotaManager } from './quotas.js';
import type { HandlerRegistry } from './registry.js';
import type { RequestBudget } from './request-budget.js';
import type { SaslSettings } from './sasl/authenticator.js';

/** What every connection of one gateway shares. */
export interface GatewayRuntime {
  core: Core;
  limits: ServerLimits;
  log: Logger;
  registry: HandlerRegistry;
  shared: Map<string, unknown>;
  /** Request bytes held across all connections (request-budget.ts). */
  budget: RequestBudget;
  authorizer: Authorizer;
  quotas: QuotaManager;
}

/** What the connections of one listener share. */
export interface ListenerRuntime {
  name: SecurityProtocol;
  /** The gateway's settings with this listener's advertised address. */
  settings: GatewaySettings;
  sasl: SaslSettings | null;
}
