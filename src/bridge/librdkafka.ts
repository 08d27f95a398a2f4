/**
 * The reverse bridge (--to-kafka) writes to Kafka with librdkafka, through
 * @confluentinc/kafka-javascript (the bridge reads every source with the
 * project's own client, src/kafka-client). That binding is native code built
 * against the system's librdkafka libraries (about 80 s, needing the -dev
 * packages), which a gateway-only install should not pay for, so it is not a
 * production dependency: it is loaded here, on the first `bridge --to-kafka`,
 * and its absence is one sentence saying how to install it.
 */
import type * as Binding from '@confluentinc/kafka-javascript';
import type { Logger } from 'pino';

export type Librdkafka = typeof Binding;

/** The version the project is tested with (package.json's devDependencies). */
export const LIBRDKAFKA_BINDING = '@confluentinc/kafka-javascript@1.10.1';

export class MissingLibrdkafka extends Error {
  override readonly name = 'MissingLibrdkafka';
}

export async function loadLibrdkafka(): Promise<Librdkafka> {
  let loaded: { default?: Librdkafka } & Partial<Librdkafka>;
  try {
    loaded = (await import('@confluentinc/kafka-javascript')) as typeof loaded;
  } catch (e) {
    throw new MissingLibrdkafka(
      `The reverse bridge (--to-kafka) needs librdkafka's Node.js binding, which is not installed or not built (${(e as Error).message.split('\n')[0]}). ` +
        `Install it beside queen-gateway with: npm install --no-save ${LIBRDKAFKA_BINDING} && CKJS_LINKING=dynamic npm rebuild --dangerously-allow-all-scripts @confluentinc/kafka-javascript ` +
        `(the build, about 80 s, needs the libraries librdkafka links against: on Debian apt-get install libzstd-dev liblz4-dev libssl-dev libsasl2-dev zlib1g-dev).`,
    );
  }
  return (loaded.default ?? loaded) as Librdkafka;
}

/** librdkafka's syslog severity for errors: the bridge keeps its log events from there up (a log_level option changes it). */
const LIBRDKAFKA_ERROR = 3;

/** Settings every bridge client starts with, before the user's options: librdkafka's errors handed to the bridge as log events. */
export const LOG_EVENTS = { event_cb: true, log_level: LIBRDKAFKA_ERROR } as const;

interface Connectable {
  on(event: 'event.log', listener: (e: { severity: number; fac: string; message: string }) => void): unknown;
  connect(options: { timeout: number }, cb: (err: Binding.LibrdKafkaError | null) => void): unknown;
}

/**
 * Connects a client made with LOG_EVENTS. librdkafka's connect fails with
 * "broker transport failure" alone; why (a refused login, a certificate) is
 * only in its log: its errors go to the bridge's log, and the first few into
 * the failure, which says `what` could not be reached and `fix`.
 */
export async function connectNamingErrors(client: Connectable, what: string, fix: string, log: Logger): Promise<void> {
  const reasons: string[] = [];
  client.on('event.log', (e) => {
    if (e.severity > LIBRDKAFKA_ERROR) return;
    if (reasons.length < 3 && !reasons.includes(e.message)) reasons.push(e.message);
    log.warn({ facility: e.fac }, `librdkafka: ${e.message}`);
  });
  await new Promise<void>((resolve, reject) =>
    client.connect({ timeout: 30_000 }, (err) =>
      err ? reject(new Error(`The bridge could not connect to ${what}: ${err.message}${reasons.length > 0 ? ` (${reasons.join('; ')})` : ''}. ${fix}`)) : resolve(),
    ),
  );
}
