/**
 * `npm run apache-kafka`: Apache Kafka on loopback in the foreground, for
 * people comparing the gateway with the real thing by hand. Fetches the jars
 * on first use, starts one KRaft node (see test/support/apache-kafka.ts),
 * prints its bootstrap address, and stops it cleanly on Ctrl-C.
 *
 *   npm run apache-kafka                          # a free port
 *   npm run apache-kafka -- --port 19092          # a chosen one
 *   npm run apache-kafka -- --config num.partitions=3 --config auto.create.topics.enable=false
 */
import { parseArgs } from 'node:util';
import { startApacheKafka } from '../support/apache-kafka.js';

const USAGE = 'usage: npm run apache-kafka -- [--port N] [--config key=value]...';

function fail(sentence: string): never {
  console.error(`${sentence}\n${USAGE}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({ options: { port: { type: 'string' }, config: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } } });
} catch (e) {
  fail((e as Error).message);
}
if (parsed.values.help) {
  console.log(USAGE);
  process.exit(0);
}
const port = parsed.values.port === undefined ? undefined : Number(parsed.values.port);
if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) fail(`--port takes a port number from 1 to 65535, not ${JSON.stringify(parsed.values.port)}.`);
const config: Record<string, string> = {};
for (const entry of parsed.values.config ?? []) {
  const at = entry.indexOf('=');
  if (at <= 0) fail(`--config takes key=value (a server.properties entry), not ${JSON.stringify(entry)}.`);
  config[entry.slice(0, at)] = entry.slice(at + 1);
}

const started = Date.now();
console.log('starting Apache Kafka (the first run fetches it from Maven Central)...');
const kafka = await startApacheKafka({ ...(port === undefined ? {} : { port }), config, initialRebalanceDelayMs: 3000 });
console.log(`Apache Kafka ${kafka.version} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`  bootstrap: ${kafka.bootstrap}`);
console.log(`  log:       ${kafka.logFile}`);
console.log('Ctrl-C stops it and removes its data.');

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  console.log('stopping Apache Kafka...');
  await kafka.stop();
  console.log('stopped.');
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
