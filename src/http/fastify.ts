// fastify's CommonJS entry seen from ESM under NodeNext: one place to get the factory and its types.
import fastify from 'fastify';

export const Fastify = fastify;
export const LogController = fastify.LogController;
export type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
