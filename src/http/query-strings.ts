import type { FastifyInstance } from './fastify.js';

/**
 * Query strings are text; a route's querystring schema says which fields are
 * numbers or switches. Schema validation does not coerce (a JSON body's
 * `"partitions": "0x10"` is a string and is refused as one), so query fields
 * are read here, before validation, and strictly: decimal digits for an
 * integer, a decimal for a number, `true`/`false` for a boolean. Anything
 * else stays a string and fails validation with a sentence naming the field.
 */

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

function readQueryValue(type: unknown, raw: string): unknown {
  switch (type) {
    case 'integer':
      return INTEGER.test(raw) ? Number(raw) : raw;
    case 'number':
      return DECIMAL.test(raw) ? Number(raw) : raw;
    case 'boolean':
      return raw === 'true' ? true : raw === 'false' ? false : raw;
    default:
      return raw;
  }
}

export function installQueryStringReading(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const schema = request.routeOptions.schema?.querystring as { properties?: Record<string, { type?: unknown }> } | undefined;
    const query = request.query as Record<string, unknown> | undefined;
    if (!schema?.properties || !query) return;
    for (const [name, property] of Object.entries(schema.properties)) {
      const raw = query[name];
      if (typeof raw === 'string') query[name] = readQueryValue(property.type, raw);
    }
  });
}
