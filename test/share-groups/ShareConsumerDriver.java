// A Kafka 4.4 KafkaShareConsumer (and the admin calls a share group needs) as
// the share group tests drive it, speaking JSON lines on stdout. Compiled by
// test/support/java-share-consumer.ts against Apache Kafka's own jars.
//
//   consume BOOTSTRAP GROUP TOPIC MODE SECONDS
//     MODE accept: every record polled is accepted (implicit acknowledgement,
//     committed after each poll); hold: polls until it gets records, prints
//     them, then never polls again, so it holds their locks while its
//     heartbeat keeps it a member (until it is killed); campaign: as accept,
//     but after each commitSync prints what became of each partition's
//     acknowledgements, {"event":"acked","partition":P,"offsets":[O...],
//     "accepted":true|false,"error":E}, and an exception from poll or commit
//     is printed ({"event":"exception",...}) instead of ending the consumer,
//     as the fault campaign needs (test/campaign/share-group.ts). Ends when stdin
//     closes or SECONDS pass. Lines: {"event":"record","partition":P,
//     "offset":O,"deliveryCount":D,"value":V}, {"event":"holding"}, {"event":"closed"}.
//   config BOOTSTRAP GROUP KEY=VALUE...
//     Sets group configs with IncrementalAlterConfigs; prints {"event":"configured"}.
// Errors print {"event":"error","type":T,"message":M} and exit 1.
package queen.gateway.share;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;

public final class ShareConsumerDriver {
  private ShareConsumerDriver() {}

  static String quote(String s) {
    if (s == null) return "null";
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  static synchronized void emit(String json) {
    System.out.println(json);
    System.out.flush();
  }

  public static void main(String[] args) {
    try {
      if (args[0].equals("consume")) consume(args[1], args[2], args[3], args[4], Integer.parseInt(args[5]));
      else if (args[0].equals("config")) config(args[1], args[2], List.of(args).subList(3, args.length));
      else throw new IllegalArgumentException("unknown command " + args[0]);
    } catch (Exception e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      emit("{\"event\":\"error\",\"type\":" + quote(cause.getClass().getSimpleName()) + ",\"message\":" + quote(cause.getMessage()) + "}");
      System.exit(1);
    }
    System.exit(0);
  }

  static void consume(String bootstrap, String group, String topic, String mode, int seconds) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("group.id", group);
    p.put("client.id", "share-" + mode);
    p.put("key.deserializer", StringDeserializer.class.getName());
    p.put("value.deserializer", StringDeserializer.class.getName());
    AtomicBoolean stop = new AtomicBoolean(false);
    Thread stdin = new Thread(() -> {
      try {
        while (System.in.read() != -1) { }
      } catch (Exception ignored) { }
      stop.set(true);
    });
    stdin.setDaemon(true);
    stdin.start();
    long deadline = System.currentTimeMillis() + seconds * 1000L;
    try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(p)) {
      consumer.subscribe(List.of(topic));
      while (!stop.get() && System.currentTimeMillis() < deadline) {
        ConsumerRecords<String, String> records;
        try {
          records = consumer.poll(Duration.ofMillis(500));
        } catch (RuntimeException e) {
          if (!mode.equals("campaign")) throw e;
          emitException("poll", e);
          Thread.sleep(200);
          continue;
        }
        for (ConsumerRecord<String, String> r : records) {
          emit("{\"event\":\"record\",\"partition\":" + r.partition() + ",\"offset\":" + r.offset()
              + ",\"deliveryCount\":" + r.deliveryCount().map(String::valueOf).orElse("null") + ",\"value\":" + quote(r.value()) + "}");
        }
        if (records.isEmpty()) continue;
        if (mode.equals("campaign")) {
          commitReporting(consumer, records);
          continue;
        }
        if (mode.equals("hold")) {
          emit("{\"event\":\"holding\"}");
          while (!stop.get() && System.currentTimeMillis() < deadline) Thread.sleep(100);
          break;
        }
        consumer.commitSync();
      }
    }
    emit("{\"event\":\"closed\"}");
  }

  static void emitException(String where, Throwable e) {
    emit("{\"event\":\"exception\",\"where\":" + quote(where) + ",\"type\":" + quote(e.getClass().getSimpleName()) + ",\"message\":" + quote(e.getMessage()) + "}");
  }

  /** Accepts the poll's records (implicit acknowledgement) and prints, per partition, whether the commit was answered without error. */
  static void commitReporting(KafkaShareConsumer<String, String> consumer, ConsumerRecords<String, String> records) {
    Map<TopicIdPartition, Optional<KafkaException>> results;
    String failure = null;
    try {
      results = consumer.commitSync();
    } catch (RuntimeException e) {
      emitException("commitSync", e);
      results = Map.of();
      failure = e.getClass().getSimpleName() + ": " + e.getMessage();
    }
    Map<Integer, StringBuilder> offsets = new TreeMap<>();
    for (ConsumerRecord<String, String> r : records) {
      StringBuilder b = offsets.computeIfAbsent(r.partition(), k -> new StringBuilder());
      if (b.length() > 0) b.append(',');
      b.append(r.offset());
    }
    for (Map.Entry<Integer, StringBuilder> e : offsets.entrySet()) {
      Optional<KafkaException> result = null;
      for (Map.Entry<TopicIdPartition, Optional<KafkaException>> r : results.entrySet()) {
        if (r.getKey().partition() == e.getKey()) result = r.getValue();
      }
      boolean accepted = result != null && result.isEmpty();
      String error = accepted ? null : result == null ? (failure != null ? failure : "no result for the partition") : result.get().getClass().getSimpleName() + ": " + result.get().getMessage();
      emit("{\"event\":\"acked\",\"partition\":" + e.getKey() + ",\"offsets\":[" + e.getValue() + "],\"accepted\":" + accepted + ",\"error\":" + quote(error) + "}");
    }
  }

  static void config(String bootstrap, String group, List<String> settings) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    try (Admin admin = Admin.create(p)) {
      List<AlterConfigOp> ops = new ArrayList<>();
      for (String s : settings) {
        String[] kv = s.split("=", 2);
        ops.add(new AlterConfigOp(new ConfigEntry(kv[0], kv[1]), AlterConfigOp.OpType.SET));
      }
      admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all().get();
    }
    emit("{\"event\":\"configured\"}");
  }
}
