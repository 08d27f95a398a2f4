/**
 * The peer broker: librdkafka's built-in mock cluster (an in-memory Kafka
 * broker written in C). Any librdkafka client given `test.mock.num.brokers`
 * starts one inside its own process; this process holds such a client and
 * nothing else, so the mock's CPU and memory can be read from outside like
 * the gateway's. The mock's address comes from the client's NOTICE log line
 * "Mock cluster enabled: … replaced with 127.0.0.1:PORT"; other clients then
 * connect to it as to any broker.
 *
 * Child-process entry: prints `{"listening":"127.0.0.1:PORT"}` on stdout; ends on SIGTERM.
 */
import KafkaJavascript from '@confluentinc/kafka-javascript';
import type { ProducerGlobalConfig } from '@confluentinc/kafka-javascript';

const { Producer } = KafkaJavascript;
const ADDRESS = /Mock cluster enabled: .* replaced with (127\.0\.0\.1:\d+)/;

const host = new Producer({ 'bootstrap.servers': '', 'test.mock.num.brokers': 1, event_cb: true } as unknown as ProducerGlobalConfig);
let announced = false;
host.on('event.log', (entry: { message: string }) => {
  const match = ADDRESS.exec(entry.message);
  if (match && !announced) {
    announced = true;
    process.stdout.write(JSON.stringify({ listening: match[1] }) + '\n');
  }
});
host.connect({ timeout: 20_000 }, (err) => {
  if (err) {
    process.stderr.write(`the mock cluster did not start: ${err.message}\n`);
    process.exit(1);
  }
});
// The mock's threads live as long as this client; poll keeps its log events flowing.
host.setPollInterval(100);
setTimeout(() => {
  if (!announced) {
    process.stderr.write('the mock cluster never logged its address\n');
    process.exit(1);
  }
}, 20_000).unref();
process.on('SIGTERM', () => process.exit(0));
