/**
 * Queen's maintenance switches (../maintenance.ts): GET and POST
 * /api/v1/system/maintenance (pushes buffered until it ends) and
 * /api/v1/system/maintenance/pop (pops answer no messages), with Queen's
 * bodies and answers.
 */
import type { HttpApiContext } from '../context.js';

const SWITCH = { type: 'object', required: ['enabled'], properties: { enabled: { type: 'boolean' } } } as const;

export function registerMaintenanceRoutes({ app, maintenance }: HttpApiContext): void {
  const pushStatus = async () => {
    const modes = await maintenance.modes();
    const buffered = await maintenance.bufferedCount();
    return { maintenanceMode: modes.push, popMaintenanceMode: modes.pop, bufferedMessages: buffered, bufferHealthy: true, bufferStats: { pending: buffered } };
  };
  app.get('/api/v1/system/maintenance', { schema: {} }, pushStatus);
  app.post<{ Body: { enabled: boolean } }>('/api/v1/system/maintenance', { schema: { body: SWITCH } }, async (request) => {
    await maintenance.set('push', request.body.enabled);
    return {
      ...(await pushStatus()),
      message: request.body.enabled
        ? 'Maintenance mode ENABLED. Pushes are buffered and delivered when it ends.'
        : 'Maintenance mode DISABLED. Buffered pushes are being delivered.',
    };
  });
  app.get('/api/v1/system/maintenance/pop', { schema: {} }, async () => {
    const { pop } = await maintenance.modes();
    return { popMaintenanceMode: pop, message: pop ? 'Pop maintenance mode is ON. Pops answer no messages.' : 'Pop maintenance mode is OFF. Normal operation.' };
  });
  app.post<{ Body: { enabled: boolean } }>('/api/v1/system/maintenance/pop', { schema: { body: SWITCH } }, async (request) => {
    const { pop } = await maintenance.set('pop', request.body.enabled);
    return { popMaintenanceMode: pop, message: pop ? 'Pop maintenance mode ENABLED. Pops answer no messages.' : 'Pop maintenance mode DISABLED. Normal operation resumed.' };
  });
}
