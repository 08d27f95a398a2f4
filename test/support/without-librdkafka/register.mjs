// node --import this file: the process runs as if librdkafka's binding were not installed (./hooks.mjs).
import { register } from 'node:module';

register(new URL('./hooks.mjs', import.meta.url));
