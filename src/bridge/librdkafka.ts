/**
 * The bridge reads its source with librdkafka, through
 * @confluentinc/kafka-javascript. That binding is native code built against
 * the system's librdkafka libraries (about 80 s, needing the -dev packages),
 * which a gateway-only install should not pay for, so it is not a production
 * dependency: it is loaded here, on the first `bridge` command, and its absence
 * is one sentence saying how to install it.
 */
import type * as Binding from '@confluentinc/kafka-javascript';

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
      `The bridge needs librdkafka's Node.js binding, which is not installed or not built (${(e as Error).message.split('\n')[0]}). ` +
        `Install it beside queen-gateway with: npm install --no-save ${LIBRDKAFKA_BINDING} && CKJS_LINKING=dynamic npm rebuild --dangerously-allow-all-scripts @confluentinc/kafka-javascript ` +
        `(the build, about 80 s, needs the libraries librdkafka links against: on Debian apt-get install libzstd-dev liblz4-dev libssl-dev libsasl2-dev zlib1g-dev).`,
    );
  }
  return (loaded.default ?? loaded) as Librdkafka;
}
