package queen.gateway.javaclient;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TopicListing;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Apache Kafka's Java client as the end-to-end suite drives it: one subcommand
 * per run, its settings as JSON in the second argument, and what happened as
 * JSON lines on stdout for the test to assert. Client settings in "config"
 * are added to (or replace) the ones below.
 *
 * <pre>
 *   produce {"bootstrap", "topic", "records": [{"partition"?, "timestamp"?, "key", "value"}], "intervalMs"?, "config"?}
 *       an idempotent producer (enable.idempotence, acks=all); one "sent" or
 *       "failed" line per record, in the order given, then "done". With
 *       intervalMs, each record is sent and waited for alone, its line written
 *       at once, then a pause of intervalMs.
 *   consume {"bootstrap", "topics", "groupId", "clientId"?, "maxRecords"?, "config"?}
 *       a consumer group member: "assigned"/"revoked" as the group rebalances,
 *       "record" then "committed" (commitSync of that record's offset + 1) per
 *       record; stops after maxRecords records, or when "stop" or end of file
 *       arrives on stdin, then closes (leaving the group) and says "closed".
 *   admin   {"bootstrap", "ops": [{"op", ...}], "config"?}
 *       runs the operations in order, one line each (see {@link #adminOp}).
 *   transact {"bootstrap", "topic", "transactionalId", "groupId", "steps": [{"action": "commit"|"abort",
 *             "records": [{"partition", "key", "value"}], "offsets"?: [{"topic", "partition", "offset"}]}],
 *             "fence"?, "config"?}
 *       a transactional producer: initTransactions, then per step
 *       beginTransaction, the records, sendOffsetsToTransaction for groupId
 *       when offsets are given, and commitTransaction or (after a flush, so
 *       the records are stored) abortTransaction; a "step" line each. With
 *       "fence", this producer then opens a transaction, a second producer
 *       with the same transactional id runs initTransactions ("successor"),
 *       the first one's send and commit are attempted ("zombie", with the
 *       error that stopped it) and the successor commits one record
 *       ("successor-committed"). Then "done".
 * </pre>
 *
 * Security settings (security.protocol, sasl.*, ssl.*) come in "config" like
 * any other; OAUTHBEARER logs in with {@link SignedTokenLoginHandler}.
 *
 * A failure is a line with "error": {"type": the exception's class, "message"},
 * the cause's for the futures' ExecutionException, so tests assert Kafka's
 * error, never a stack trace.
 */
public final class JavaClientDriver {
  private static final ObjectMapper JSON = new ObjectMapper();

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: JavaClientDriver produce|consume|admin '<settings as JSON>'");
      System.exit(2);
    }
    JsonNode spec = JSON.readTree(args[1]);
    try {
      switch (args[0]) {
        case "produce" -> produce(spec);
        case "consume" -> consume(spec);
        case "admin" -> admin(spec);
        case "transact" -> transact(spec);
        default -> {
          System.err.println("unknown subcommand " + args[0] + ": use produce, consume or admin");
          System.exit(2);
        }
      }
    } catch (Exception e) {
      emit(line("fatal", "error", error(e)));
      System.exit(1);
    }
  }

  // ─── produce ───────────────────────────────────────────────────────────────

  private static void produce(JsonNode spec) throws Exception {
    Properties props = clientProperties(spec);
    props.putIfAbsent("enable.idempotence", "true");
    props.putIfAbsent("acks", "all");
    props.putIfAbsent("key.serializer", StringSerializer.class.getName());
    props.putIfAbsent("value.serializer", StringSerializer.class.getName());
    overrides(spec, props);
    String topic = spec.get("topic").asText();
    if (spec.hasNonNull("intervalMs")) {
      produceSlowly(props, topic, spec.get("records"), spec.get("intervalMs").asLong());
      return;
    }
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
      List<Future<RecordMetadata>> sends = new ArrayList<>();
      for (JsonNode record : spec.get("records")) {
        Integer partition = record.hasNonNull("partition") ? record.get("partition").asInt() : null;
        Long timestamp = record.hasNonNull("timestamp") ? record.get("timestamp").asLong() : null;
        sends.add(producer.send(new ProducerRecord<>(topic, partition, timestamp, text(record, "key"), text(record, "value"))));
      }
      producer.flush();
      for (int i = 0; i < sends.size(); i++) {
        try {
          RecordMetadata sent = sends.get(i).get();
          emit(line("sent", "index", i, "partition", sent.partition(), "offset", sent.offset(), "timestamp", sent.timestamp()));
        } catch (ExecutionException e) {
          emit(line("failed", "index", i, "error", error(e)));
        }
      }
    }
    emit(line("done"));
  }

  /**
   * One record at a time, each waited for and reported before a pause: a
   * producer that lives across several SASL sessions (re-authentication).
   */
  private static void produceSlowly(Properties props, String topic, JsonNode records, long intervalMs) throws Exception {
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
      int i = 0;
      for (JsonNode record : records) {
        Integer partition = record.hasNonNull("partition") ? record.get("partition").asInt() : null;
        try {
          RecordMetadata sent = producer.send(new ProducerRecord<>(topic, partition, null, text(record, "key"), text(record, "value"))).get();
          emit(line("sent", "index", i, "partition", sent.partition(), "offset", sent.offset(), "timestamp", sent.timestamp()));
        } catch (ExecutionException e) {
          emit(line("failed", "index", i, "error", error(e)));
        }
        i++;
        Thread.sleep(intervalMs);
      }
    }
    emit(line("done"));
  }

  // ─── transact ──────────────────────────────────────────────────────────────

  private static void transact(JsonNode spec) throws Exception {
    Properties props = clientProperties(spec);
    props.put("transactional.id", spec.get("transactionalId").asText());
    props.putIfAbsent("key.serializer", StringSerializer.class.getName());
    props.putIfAbsent("value.serializer", StringSerializer.class.getName());
    overrides(spec, props);
    String topic = spec.get("topic").asText();
    String groupId = text(spec, "groupId");
    KafkaProducer<String, String> producer = new KafkaProducer<>(props);
    try {
      producer.initTransactions();
      int index = 0;
      for (JsonNode step : spec.get("steps")) {
        String action = step.get("action").asText();
        producer.beginTransaction();
        for (JsonNode record : step.get("records")) {
          producer.send(new ProducerRecord<>(topic, record.get("partition").asInt(), text(record, "key"), text(record, "value")));
        }
        if (step.hasNonNull("offsets")) {
          Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
          for (JsonNode o : step.get("offsets")) offsets.put(new TopicPartition(o.get("topic").asText(), o.get("partition").asInt()), new OffsetAndMetadata(o.get("offset").asLong()));
          producer.sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata(groupId));
        }
        if (action.equals("commit")) {
          producer.commitTransaction();
        } else {
          producer.flush();
          producer.abortTransaction();
        }
        emit(line("step", "index", index++, "action", action));
      }
      if (spec.path("fence").asBoolean(false)) fence(producer, props, topic);
    } finally {
      producer.close(Duration.ofSeconds(10));
    }
    emit(line("done"));
  }

  /** A second instance with the same transactional id takes over; the first is then fenced. */
  private static void fence(KafkaProducer<String, String> zombie, Properties props, String topic) {
    zombie.beginTransaction();
    zombie.send(new ProducerRecord<>(topic, 0, null, "zombie-open"));
    zombie.flush();
    try (KafkaProducer<String, String> successor = new KafkaProducer<>(props)) {
      successor.initTransactions();
      emit(line("successor"));
      try {
        zombie.send(new ProducerRecord<>(topic, 0, null, "zombie-late")).get();
        zombie.commitTransaction();
        emit(line("zombie", "fenced", false));
      } catch (Exception e) {
        emit(line("zombie", "fenced", true, "error", error(e)));
      }
      successor.beginTransaction();
      successor.send(new ProducerRecord<>(topic, 0, null, "successor"));
      successor.commitTransaction();
      emit(line("successor-committed"));
    }
  }

  // ─── consume ───────────────────────────────────────────────────────────────

  private static volatile boolean stopRequested = false;

  private static void consume(JsonNode spec) throws Exception {
    Properties props = clientProperties(spec);
    props.put("group.id", spec.get("groupId").asText());
    props.putIfAbsent("enable.auto.commit", "false");
    props.putIfAbsent("auto.offset.reset", "earliest");
    props.putIfAbsent("key.deserializer", StringDeserializer.class.getName());
    props.putIfAbsent("value.deserializer", StringDeserializer.class.getName());
    overrides(spec, props);
    long maxRecords = spec.hasNonNull("maxRecords") ? spec.get("maxRecords").asLong() : Long.MAX_VALUE;
    List<String> topics = new ArrayList<>();
    spec.get("topics").forEach(t -> topics.add(t.asText()));

    // The test says "stop" when it has seen enough; end of file means the test process is gone.
    Thread stdin = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null && !line.trim().equals("stop")) {}
      } catch (Exception ignored) {
        // Same as end of file.
      }
      stopRequested = true;
    });
    stdin.setDaemon(true);
    stdin.start();

    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
      consumer.subscribe(topics, new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
          emit(line("assigned", "partitions", partitionList(partitions)));
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
          emit(line("revoked", "partitions", partitionList(partitions)));
        }
      });
      long read = 0;
      // The flag is checked between polls rather than with wakeup(), so a stop never cuts a commit short.
      while (!stopRequested && read < maxRecords) {
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
          if (read == maxRecords) break;
          read++;
          emit(line("record", "topic", record.topic(), "partition", record.partition(), "offset", record.offset(),
              "key", record.key(), "value", record.value()));
          TopicPartition at = new TopicPartition(record.topic(), record.partition());
          try {
            consumer.commitSync(Map.of(at, new OffsetAndMetadata(record.offset() + 1)));
            emit(line("committed", "topic", record.topic(), "partition", record.partition(), "offset", record.offset() + 1));
          } catch (Exception e) {
            emit(line("commit-failed", "topic", record.topic(), "partition", record.partition(), "offset", record.offset() + 1, "error", error(e)));
          }
        }
      }
    }
    emit(line("closed"));
  }

  // ─── admin ─────────────────────────────────────────────────────────────────

  private static void admin(JsonNode spec) throws Exception {
    Properties props = clientProperties(spec);
    overrides(spec, props);
    try (Admin admin = Admin.create(props)) {
      for (JsonNode op : spec.get("ops")) {
        String name = op.get("op").asText();
        Map<String, Object> result = line("result", "op", name);
        try {
          result.put("result", adminOp(admin, name, op));
        } catch (ExecutionException | RuntimeException e) {
          result.put("error", error(e));
        }
        emit(result);
      }
    }
    emit(line("done"));
  }

  /**
   * One admin operation, its result as plain JSON:
   * createTopics {topics: [{name, partitions, replicationFactor}]}, per topic;
   * listTopics {listInternal?}; describeTopics {topics}; describeCluster;
   * listOffsets {topic, partitions, spec: earliest|latest|maxTimestamp|a timestamp};
   * describeConfigs {topic}; deleteTopics {topics}; listConsumerGroups;
   * describeConsumerGroups {groups}; listConsumerGroupOffsets {group}.
   * A per-topic failure in createTopics or deleteTopics is reported in that
   * topic's entry; any other failure fails the whole operation.
   */
  private static Object adminOp(Admin admin, String name, JsonNode op) throws Exception {
    switch (name) {
      case "createTopics": {
        List<NewTopic> topics = new ArrayList<>();
        for (JsonNode t : op.get("topics")) topics.add(new NewTopic(t.get("name").asText(), t.get("partitions").asInt(), (short) t.get("replicationFactor").asInt()));
        CreateTopicsResult created = admin.createTopics(topics);
        Map<String, Object> out = new TreeMap<>();
        for (NewTopic topic : topics) {
          try {
            created.values().get(topic.name()).get();
            out.put(topic.name(), object("partitions", created.numPartitions(topic.name()).get(), "replicationFactor", created.replicationFactor(topic.name()).get()));
          } catch (ExecutionException e) {
            out.put(topic.name(), object("error", error(e)));
          }
        }
        return out;
      }
      case "deleteTopics": {
        List<String> names = textList(op.get("topics"));
        Map<String, ? extends Future<Void>> deleted = admin.deleteTopics(names).topicNameValues();
        Map<String, Object> out = new TreeMap<>();
        for (String topic : names) {
          try {
            deleted.get(topic).get();
            out.put(topic, object("deleted", true));
          } catch (ExecutionException e) {
            out.put(topic, object("error", error(e)));
          }
        }
        return out;
      }
      case "listTopics": {
        ListTopicsOptions options = new ListTopicsOptions().listInternal(op.path("listInternal").asBoolean(false));
        List<String> names = new ArrayList<>();
        for (TopicListing listing : admin.listTopics(options).listings().get()) names.add(listing.name());
        names.sort(null);
        return names;
      }
      case "describeTopics": {
        Map<String, TopicDescription> described = admin.describeTopics(textList(op.get("topics"))).allTopicNames().get();
        Map<String, Object> out = new TreeMap<>();
        for (TopicDescription d : described.values()) {
          List<Object> partitions = new ArrayList<>();
          for (TopicPartitionInfo p : d.partitions()) {
            partitions.add(object("partition", p.partition(), "leader", p.leader() == null ? null : p.leader().id(),
                "replicas", nodeIds(p.replicas()), "isr", nodeIds(p.isr())));
          }
          out.put(d.name(), object("internal", d.isInternal(), "topicIdSet", d.topicId() != null && !d.topicId().toString().equals("AAAAAAAAAAAAAAAAAAAAAA"),
              "partitions", partitions));
        }
        return out;
      }
      case "describeCluster": {
        DescribeClusterResult cluster = admin.describeCluster();
        List<Object> nodes = new ArrayList<>();
        for (Node n : cluster.nodes().get()) nodes.add(object("id", n.id(), "host", n.host(), "port", n.port()));
        Node controller = cluster.controller().get();
        return object("clusterId", cluster.clusterId().get(), "controller", controller == null ? null : controller.id(), "nodes", nodes);
      }
      case "listOffsets": {
        String topic = op.get("topic").asText();
        String which = op.get("spec").asText();
        OffsetSpec offsetSpec = switch (which) {
          case "earliest" -> OffsetSpec.earliest();
          case "latest" -> OffsetSpec.latest();
          case "maxTimestamp" -> OffsetSpec.maxTimestamp();
          default -> OffsetSpec.forTimestamp(Long.parseLong(which));
        };
        Map<TopicPartition, OffsetSpec> request = new LinkedHashMap<>();
        for (JsonNode p : op.get("partitions")) request.put(new TopicPartition(topic, p.asInt()), offsetSpec);
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> listed = admin.listOffsets(request).all().get();
        Map<String, Object> out = new TreeMap<>();
        listed.forEach((tp, info) -> out.put(String.valueOf(tp.partition()), object("offset", info.offset(), "timestamp", info.timestamp())));
        return out;
      }
      case "describeConfigs": {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, op.get("topic").asText());
        Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
        Map<String, Object> out = new TreeMap<>();
        config.entries().forEach(e -> out.put(e.name(), object("value", e.value(), "source", e.source().name(), "readOnly", e.isReadOnly(), "sensitive", e.isSensitive())));
        return out;
      }
      case "listConsumerGroups": {
        List<Object> out = new ArrayList<>();
        @SuppressWarnings("deprecation")
        Collection<ConsumerGroupListing> listings = admin.listConsumerGroups().all().get();
        for (ConsumerGroupListing g : listings) {
          out.add(object("groupId", g.groupId(), "state", g.groupState().map(Enum::name).orElse(null), "simple", g.isSimpleConsumerGroup()));
        }
        return out;
      }
      case "describeConsumerGroups": {
        Map<String, ConsumerGroupDescription> described = admin.describeConsumerGroups(textList(op.get("groups"))).all().get();
        Map<String, Object> out = new TreeMap<>();
        for (ConsumerGroupDescription g : described.values()) {
          List<Object> members = new ArrayList<>();
          for (MemberDescription m : g.members()) {
            members.add(object("clientId", m.clientId(), "host", m.host(), "memberIdSet", !m.consumerId().isEmpty(),
                "assignment", partitionList(m.assignment().topicPartitions())));
          }
          out.put(g.groupId(), object("state", g.groupState().name(), "type", g.type().name(), "assignor", g.partitionAssignor(),
              "coordinator", g.coordinator() == null ? null : g.coordinator().id(), "simple", g.isSimpleConsumerGroup(), "members", members));
        }
        return out;
      }
      case "listConsumerGroupOffsets": {
        Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(op.get("group").asText()).partitionsToOffsetAndMetadata().get();
        Map<String, Object> out = new TreeMap<>();
        offsets.forEach((tp, o) -> out.put(tp.topic() + ":" + tp.partition(), o == null ? null : object("offset", o.offset(), "metadata", o.metadata())));
        return out;
      }
      default:
        throw new IllegalArgumentException("unknown admin operation " + name);
    }
  }

  // ─── shared ────────────────────────────────────────────────────────────────

  private static Properties clientProperties(JsonNode spec) {
    Properties props = new Properties();
    props.put("bootstrap.servers", spec.get("bootstrap").asText());
    if (spec.hasNonNull("clientId")) props.put("client.id", spec.get("clientId").asText());
    return props;
  }

  /** The test's own settings win over the driver's defaults. */
  private static void overrides(JsonNode spec, Properties props) {
    if (spec.hasNonNull("config")) spec.get("config").fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
  }

  private static String text(JsonNode node, String field) {
    return node.hasNonNull(field) ? node.get(field).asText() : null;
  }

  private static List<String> textList(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  private static List<Integer> nodeIds(List<Node> nodes) {
    List<Integer> ids = new ArrayList<>();
    for (Node n : nodes) ids.add(n.id());
    return ids;
  }

  private static List<Object> partitionList(Collection<TopicPartition> partitions) {
    List<Object> out = new ArrayList<>();
    partitions.stream()
        .sorted((a, b) -> a.topic().equals(b.topic()) ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()))
        .forEach(tp -> out.add(object("topic", tp.topic(), "partition", tp.partition())));
    return out;
  }

  private static Map<String, Object> error(Throwable e) {
    Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
    return object("type", cause.getClass().getSimpleName(), "message", cause.getMessage());
  }

  /** A JSON object of name/value pairs, in the order given. */
  private static Map<String, Object> object(Object... pairs) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) out.put((String) pairs[i], pairs[i + 1]);
    return out;
  }

  /** An output line: its "event" first, then the pairs. */
  private static Map<String, Object> line(String event, Object... pairs) {
    Map<String, Object> out = object("event", event);
    out.putAll(object(pairs));
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

  private JavaClientDriver() {}
}
