// The share-group benchmark's Java side (Kafka 4.4's own clients), speaking
// JSON lines on stdout; compiled by test/bench/share-groups-driver.ts against
// Apache Kafka's jars. Every mode prints {"event":"error",...} and exits 1 on
// a failure.
//
//   produce BOOTSTRAP TOPIC PARTITIONS COUNT BYTES
//     Creates the topic (if it is not there) and sends COUNT records of BYTES
//     round-robin over its partitions (acks=all); prints {"event":"produced"}.
//   consume share|group BOOTSTRAP GROUP TOPIC COUNT SECONDS
//     Reads COUNT records from the start in a new group: a KafkaShareConsumer
//     (share.auto.offset.reset=earliest set on the group first; each poll's
//     records accepted, implicitly, and committed with commitSync) or a
//     KafkaConsumer in a consumer group (offsets committed with commitSync
//     after each poll). The clock runs from the first record to the commit
//     after the COUNT-th: {"event":"first"} then {"event":"done",...}.
//   redeliver BOOTSTRAP GROUP TOPIC COUNT SECONDS
//     A KafkaShareConsumer in explicit mode RELEASEs every record it gets on
//     its first delivery and ACCEPTs it when it comes back; the redelivery
//     latency is from the commitSync that sent the RELEASE returning to the
//     poll that hands the record back (polls of at most 100 records). Prints
//     percentiles over COUNT records.
package queen.gateway.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class ShareBench {
  private ShareBench() {}

  static void emit(String json) {
    System.out.println(json);
    System.out.flush();
  }

  public static void main(String[] args) {
    try {
      switch (args[0]) {
        case "produce" -> produce(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]), Integer.parseInt(args[5]));
        case "consume" -> consume(args[1], args[2], args[3], args[4], Integer.parseInt(args[5]), Integer.parseInt(args[6]));
        case "redeliver" -> redeliver(args[1], args[2], args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5]));
        default -> throw new IllegalArgumentException("unknown mode " + args[0]);
      }
    } catch (Exception e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      String message = String.valueOf(cause.getMessage()).replace("\\", "\\\\").replace("\"", "'");
      emit("{\"event\":\"error\",\"type\":\"" + cause.getClass().getSimpleName() + "\",\"message\":\"" + message + "\"}");
      System.exit(1);
    }
    System.exit(0);
  }

  static void produce(String bootstrap, String topic, int partitions, int count, int bytes) throws Exception {
    Properties a = new Properties();
    a.put("bootstrap.servers", bootstrap);
    try (Admin admin = Admin.create(a)) {
      admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) throw e;
    }
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("acks", "all");
    p.put("linger.ms", "5");
    p.put("batch.size", "262144");
    p.put("key.serializer", ByteArraySerializer.class.getName());
    p.put("value.serializer", ByteArraySerializer.class.getName());
    byte[] value = new byte[bytes];
    Arrays.fill(value, (byte) 'q');
    long t0 = System.nanoTime();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      for (int i = 0; i < count; i++) producer.send(new ProducerRecord<>(topic, i % partitions, null, value));
      producer.flush();
    }
    emit("{\"event\":\"produced\",\"records\":" + count + ",\"seconds\":" + (System.nanoTime() - t0) / 1e9 + "}");
  }

  static Properties consumerProperties(String bootstrap, String group) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("group.id", group);
    p.put("key.deserializer", ByteArrayDeserializer.class.getName());
    p.put("value.deserializer", ByteArrayDeserializer.class.getName());
    return p;
  }

  static void earliest(String bootstrap, String group) throws Exception {
    Properties a = new Properties();
    a.put("bootstrap.servers", bootstrap);
    try (Admin admin = Admin.create(a)) {
      AlterConfigOp op = new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET);
      admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(op))).all().get();
    }
  }

  interface Poller extends AutoCloseable {
    ConsumerRecords<byte[], byte[]> poll();
    void commit();
  }

  static Poller poller(String kind, String bootstrap, String group, String topic) throws Exception {
    if (kind.equals("share")) {
      earliest(bootstrap, group);
      KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(consumerProperties(bootstrap, group));
      c.subscribe(List.of(topic));
      return new Poller() {
        public ConsumerRecords<byte[], byte[]> poll() { return c.poll(Duration.ofMillis(200)); }
        public void commit() { c.commitSync(); }
        public void close() { c.close(); }
      };
    }
    Properties p = consumerProperties(bootstrap, group);
    p.put("auto.offset.reset", "earliest");
    p.put("enable.auto.commit", "false");
    KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p);
    c.subscribe(List.of(topic));
    return new Poller() {
      public ConsumerRecords<byte[], byte[]> poll() { return c.poll(Duration.ofMillis(200)); }
      public void commit() { c.commitSync(); }
      public void close() { c.close(); }
    };
  }

  static void consume(String kind, String bootstrap, String group, String topic, int count, int seconds) throws Exception {
    long started = System.nanoTime();
    long deadline = started + seconds * 1_000_000_000L;
    long first = 0;
    long last = 0;
    int records = 0;
    int firstBatch = 0;
    try (Poller c = poller(kind, bootstrap, group, topic)) {
      while (records < count && System.nanoTime() < deadline) {
        ConsumerRecords<byte[], byte[]> batch = c.poll();
        if (batch.isEmpty()) continue;
        if (records == 0) {
          first = System.nanoTime();
          firstBatch = batch.count();
          emit("{\"event\":\"first\"}");
        }
        records += batch.count();
        c.commit();
        last = System.nanoTime();
      }
    }
    double window = Math.max(last - first, 1) / 1e9;
    emit("{\"event\":\"done\",\"records\":" + records + ",\"seconds\":" + window + ",\"recordsPerSecond\":" + (records - firstBatch) / window
        + ",\"firstRecordAfterMs\":" + (first - started) / 1e6 + "}");
  }

  static void redeliver(String bootstrap, String group, String topic, int count, int seconds) throws Exception {
    earliest(bootstrap, group);
    Properties p = consumerProperties(bootstrap, group);
    p.put("share.acknowledgement.mode", "explicit");
    // Smaller polls than the default 500, so the percentiles are over many round trips rather than a few.
    p.put("max.poll.records", "100");
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    Map<String, Long> releasedAt = new HashMap<>();
    List<Double> latencies = new ArrayList<>();
    int wrongCount = 0;
    try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(p)) {
      c.subscribe(List.of(topic));
      boolean first = true;
      while (latencies.size() < count && System.nanoTime() < deadline) {
        ConsumerRecords<byte[], byte[]> batch = c.poll(Duration.ofMillis(200));
        if (batch.isEmpty()) continue;
        if (first) {
          first = false;
          emit("{\"event\":\"first\"}");
        }
        long now = System.nanoTime();
        List<String> released = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : batch) {
          String key = r.partition() + ":" + r.offset();
          Long at = releasedAt.remove(key);
          if (at == null) {
            c.acknowledge(r, AcknowledgeType.RELEASE);
            released.add(key);
          } else {
            if (r.deliveryCount().orElse((short) 0) != 2) wrongCount++;
            latencies.add((now - at) / 1e6);
            c.acknowledge(r, AcknowledgeType.ACCEPT);
          }
        }
        c.commitSync();
        long sent = System.nanoTime();
        for (String key : released) releasedAt.put(key, sent);
      }
    }
    double[] sorted = latencies.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    emit("{\"event\":\"done\",\"redelivered\":" + sorted.length + ",\"p50\":" + pct(sorted, 50) + ",\"p99\":" + pct(sorted, 99)
        + ",\"max\":" + pct(sorted, 100) + ",\"wrongDeliveryCount\":" + wrongCount + "}");
  }

  static double pct(double[] sorted, double p) {
    if (sorted.length == 0) return -1;
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100 * sorted.length) - 1)];
  }
}
