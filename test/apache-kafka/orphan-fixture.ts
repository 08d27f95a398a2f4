/**
 * A process that starts Apache Kafka and never stops it: the launcher test
 * SIGKILLs this process and expects the JVM to go too. Prints the broker's
 * pid and folder as one JSON line once it is ready.
 */
import { startApacheKafka } from '../support/apache-kafka.js';

const kafka = await startApacheKafka();
console.log(JSON.stringify({ pid: kafka.pid, dir: kafka.dir, bootstrap: kafka.bootstrap }));
setInterval(() => {}, 60_000);
