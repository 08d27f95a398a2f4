package queen.gateway.frameworks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Kafka Streams applications and a read_committed reader, as the frameworks
 * suite (test/frameworks) drives them: one subcommand per run, its settings
 * as JSON in the second argument, and what happened as JSON lines on stdout.
 * Settings in "config" are added to (or replace) the ones below. Kafka
 * Connect needs no code here: the suite runs its own ConnectDistributed.
 *
 * <pre>
 *   streams {"bootstrap", "applicationId", "topology", "input", "output", "stateDir", "config"?}
 *       a Kafka Streams application, one stream thread, until "stop" or end
 *       of file on stdin; then a clean close and "closed". Topologies:
 *         wordcount  lines of text in, the running count per lower-case
 *                    word out (key the word, value the count in decimal);
 *         totals     key and an integer amount in, the running sum per key
 *                    out, kept in the state store "totals".
 *       Lines: "state" (each KafkaStreams state change), "restored" (a store
 *       partition restored from its changelog, with the records read),
 *       "fatal" (an exception that stopped a stream thread).
 *   read {"bootstrap", "topic", "isolation"?, "atLeast"?, "timeoutMs"?, "config"?}
 *       every partition of the topic from its start to its end as the
 *       isolation level sees it (read_committed by default: up to the last
 *       stable offset), no consumer group; a "record" line each, then "end".
 *       With "atLeast", reads on (the end moving) until it has that many
 *       records; "timeout" then "end" when timeoutMs (default 60 s) passes
 *       first.
 * </pre>
 */
public final class FrameworksDriver {
  private static final ObjectMapper JSON = new ObjectMapper();

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: FrameworksDriver streams|read '<settings as JSON>'");
      System.exit(2);
    }
    JsonNode spec = JSON.readTree(args[1]);
    try {
      switch (args[0]) {
        case "streams" -> streams(spec);
        case "read" -> read(spec);
        default -> {
          System.err.println("unknown subcommand " + args[0] + ": use streams or read");
          System.exit(2);
        }
      }
    } catch (Exception e) {
      emit(line("fatal", "error", error(e)));
      System.exit(1);
    }
    System.exit(0);
  }

  // ─── streams ───────────────────────────────────────────────────────────────

  private static void streams(JsonNode spec) throws Exception {
    Properties props = new Properties();
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, spec.get("bootstrap").asText());
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, spec.get("applicationId").asText());
    props.put(StreamsConfig.STATE_DIR_CONFIG, spec.get("stateDir").asText());
    props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    // No record cache: every update goes to the changelog and the output, so a test sees each step.
    props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
    props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
    props.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
    overrides(spec, props);

    String input = spec.get("input").asText();
    String output = spec.get("output").asText();
    Topology topology = switch (spec.get("topology").asText()) {
      case "wordcount" -> wordCount(input, output);
      case "totals" -> totals(input, output);
      default -> throw new IllegalArgumentException("unknown topology " + spec.get("topology").asText() + ": use wordcount or totals");
    };

    KafkaStreams streams = new KafkaStreams(topology, props);
    CountDownLatch down = new CountDownLatch(1);
    streams.setStateListener((to, from) -> {
      emit(line("state", "from", from.name(), "to", to.name()));
      if (to == KafkaStreams.State.ERROR || to == KafkaStreams.State.NOT_RUNNING) down.countDown();
    });
    streams.setUncaughtExceptionHandler(e -> {
      emit(line("fatal", "error", error(e)));
      return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    });
    streams.setGlobalStateRestoreListener(new StateRestoreListener() {
      @Override
      public void onRestoreStart(TopicPartition partition, String store, long startingOffset, long endingOffset) {
        emit(line("restoring", "store", store, "topic", partition.topic(), "partition", partition.partition(),
            "from", startingOffset, "to", endingOffset));
      }

      @Override
      public void onBatchRestored(TopicPartition partition, String store, long batchEndOffset, long numRestored) {}

      @Override
      public void onRestoreEnd(TopicPartition partition, String store, long totalRestored) {
        emit(line("restored", "store", store, "topic", partition.topic(), "partition", partition.partition(), "records", totalRestored));
      }
    });

    // The test says "stop" when it has what it needs; end of file means the test process is gone.
    Thread stdin = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null && !line.trim().equals("stop")) {}
      } catch (Exception ignored) {
        // Same as end of file.
      }
      down.countDown();
    });
    stdin.setDaemon(true);
    stdin.start();

    streams.start();
    down.await();
    boolean closed = streams.close(Duration.ofSeconds(30));
    emit(line("closed", "clean", closed, "state", streams.state().name()));
  }

  private static Topology wordCount(String input, String output) {
    StreamsBuilder builder = new StreamsBuilder();
    builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
        .flatMapValues(text -> Arrays.asList(text.toLowerCase(Locale.ROOT).split("\\W+")))
        .filter((key, word) -> !word.isEmpty())
        // Regrouping by word goes through a repartition topic; the counts live in a changelogged store.
        .groupBy((key, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
        .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("word-counts").withValueSerde(Serdes.Long()))
        .toStream()
        .mapValues(count -> Long.toString(count))
        .to(output, Produced.with(Serdes.String(), Serdes.String()));
    return builder.build();
  }

  private static Topology totals(String input, String output) {
    StreamsBuilder builder = new StreamsBuilder();
    builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
        .groupByKey()
        .aggregate(() -> 0L, (key, amount, sum) -> sum + Long.parseLong(amount.trim()),
            Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("totals").withValueSerde(Serdes.Long()))
        .toStream()
        .mapValues(sum -> Long.toString(sum))
        .to(output, Produced.with(Serdes.String(), Serdes.String()));
    return builder.build();
  }

  // ─── read ──────────────────────────────────────────────────────────────────

  private static void read(JsonNode spec) throws Exception {
    Properties props = new Properties();
    props.put("bootstrap.servers", spec.get("bootstrap").asText());
    props.put("client.id", "queen-frameworks-reader");
    props.put("isolation.level", spec.hasNonNull("isolation") ? spec.get("isolation").asText() : "read_committed");
    props.put("enable.auto.commit", "false");
    props.put("key.deserializer", StringDeserializer.class.getName());
    props.put("value.deserializer", StringDeserializer.class.getName());
    overrides(spec, props);
    String topic = spec.get("topic").asText();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionInfo info : consumer.partitionsFor(topic, Duration.ofSeconds(30))) partitions.add(new TopicPartition(topic, info.partition()));
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long atLeast = spec.hasNonNull("atLeast") ? spec.get("atLeast").asLong() : 0;
      long deadline = System.currentTimeMillis() + (spec.hasNonNull("timeoutMs") ? spec.get("timeoutMs").asLong() : 60_000);
      long records = 0;
      // Under read_committed the end is the last stable offset: what a committed reader can have.
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
      for (;;) {
        boolean atEnd = partitions.stream().allMatch(tp -> consumer.position(tp) >= end.get(tp));
        if (atEnd && records >= atLeast) break;
        if (System.currentTimeMillis() > deadline) {
          emit(line("timeout", "records", records, "atLeast", atLeast));
          break;
        }
        // Fewer than wanted so far: the end may have moved on since it was asked.
        if (atEnd) end.putAll(consumer.endOffsets(partitions, Duration.ofSeconds(30)));
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
          records++;
          emit(line("record", "partition", record.partition(), "offset", record.offset(), "key", record.key(), "value", record.value()));
        }
      }
      Map<String, Long> ends = new LinkedHashMap<>();
      end.forEach((tp, offset) -> ends.put(Integer.toString(tp.partition()), offset));
      emit(line("end", "records", records, "endOffsets", ends));
    }
  }

  // ─── plumbing ──────────────────────────────────────────────────────────────

  private static void overrides(JsonNode spec, Properties props) {
    if (!spec.hasNonNull("config")) return;
    spec.get("config").fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
  }

  private static Map<String, Object> line(String event, Object... fields) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("event", event);
    for (int i = 0; i < fields.length; i += 2) out.put((String) fields[i], fields[i + 1]);
    return out;
  }

  private static Map<String, Object> error(Throwable e) {
    // The root cause names Kafka's error; the wrappers only say where it surfaced.
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) root = root.getCause();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("type", root.getClass().getSimpleName());
    out.put("message", root.getMessage());
    if (root != e) out.put("surfaced", e.getClass().getSimpleName() + ": " + e.getMessage());
    return out;
  }

  private static synchronized void emit(Map<String, Object> line) {
    try {
      System.out.println(JSON.writeValueAsString(line));
      System.out.flush();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
