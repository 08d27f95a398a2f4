/**
 * ACLs (DescribeAcls: DESCRIBE on the cluster) and client quotas
 * (DescribeClientQuotas: DESCRIBE_CONFIGS on the cluster), as stored in the
 * core. A quota entity component that is null is Kafka's "<default>".
 */
import { cluster } from '../access.js';
import { consoleAccess, type ConsoleContext } from './context.js';

export function registerConsoleSecurityRoutes({ app, core }: ConsoleContext): void {
  app.get('/console/api/acls', { schema: {}, config: consoleAccess(() => [cluster('DESCRIBE')]) }, async () => (await core.listAcls()).bindings);
  app.get('/console/api/quotas', { schema: {}, config: consoleAccess(() => [cluster('DESCRIBE_CONFIGS')]) }, async () =>
    (await core.listClientQuotas()).entries.map(({ entity, values }) => ({
      user: entity.user === undefined ? undefined : entity.user ?? '<default>',
      clientId: entity.clientId === undefined ? undefined : entity.clientId ?? '<default>',
      values,
    })),
  );
}
