package queen.compat;

import static queen.compat.Report.*;

import java.time.Duration;
import java.util.*;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The compatibility matrix's Java client scenario: every codec, transactions,
 * KIP-848 (group.protocol=consumer) and the share consumer (KIP-932).
 * Arguments: BOOTSTRAP PREFIX.
 */
public final class JavaScenario {
  private final String bootstrap;
  private final String prefix;
  private final String topic;
  private final String group;
  private final Admin admin;
  private int produced;

  private JavaScenario(String bootstrap, String prefix) {
    this.bootstrap = bootstrap;
    this.prefix = prefix;
    this.topic = prefix + "-records";
    this.group = prefix + "-group";
    this.admin = Admin.create(Report.map(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
  }

  public static void main(String[] args) {
    if (args.length != 2) {
      System.err.println("usage: JavaScenario BOOTSTRAP PREFIX");
      System.exit(2);
    }
    new JavaScenario(args[0], args[1]).run();
    System.exit(0);
  }

  private void run() {
    step("create-topic", () -> {
      admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
      return PARTITIONS + " partitions";
    });
    for (String codec : CODECS) {
      step("produce-" + codec, () -> {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < PER_CODEC; i++) values.add(codec + "-" + i);
        produce(topic, codec, values, Map.of());
        produced += PER_CODEC;
        return PER_CODEC + " keyed records, idempotent";
      });
    }
    groupSteps();
    step("list-offsets", this::listOffsets);
    step("transactions", this::transactions);
    step("kip848", this::kip848);
    step("share-group", () -> new ShareStep(bootstrap, prefix, admin).run());
    admin.close(Duration.ofSeconds(5));
  }

  Map<String, Object> base() {
    return Report.map(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.CLIENT_ID_CONFIG, prefix);
  }

  void produce(String target, String codec, List<String> values, Map<String, Object> extra) throws Exception {
    Map<String, Object> config = base();
    config.putAll(Report.map(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.COMPRESSION_TYPE_CONFIG, codec));
    config.putAll(extra);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
      List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
      for (int i = 0; i < values.size(); i++) sent.add(producer.send(new ProducerRecord<>(target, "k" + i, values.get(i))));
      for (var future : sent) future.get();
    }
  }

  /** A group member polled by the main thread, committing what it reads; `held` follows its assignment. */
  final class Member {
    final KafkaConsumer<String, String> consumer;
    final Set<TopicPartition> held = ConcurrentHashMap.newKeySet();
    final Set<String> seen = new HashSet<>();

    Member(String groupId, Map<String, Object> extra) {
      Map<String, Object> config = base();
      config.putAll(Report.map(ConsumerConfig.GROUP_ID_CONFIG, groupId, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest", ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false));
      config.putAll(extra);
      consumer = new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer());
      consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
        public void onPartitionsRevoked(Collection<TopicPartition> parts) { held.removeAll(parts); }
        public void onPartitionsAssigned(Collection<TopicPartition> parts) { held.addAll(parts); }
        public void onPartitionsLost(Collection<TopicPartition> parts) { held.removeAll(parts); }
      });
    }

    void poll() {
      ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
      for (ConsumerRecord<String, String> r : records) seen.add(r.partition() + ":" + r.offset());
      if (!records.isEmpty()) consumer.commitSync();
    }
  }

  private void groupSteps() {
    Member a = new Member(group, Map.of());
    Member b = new Member(group, Map.of());
    step("group-of-two", () -> {
      waitUntil(60_000, () -> "both members holding one partition and all " + produced + " records (held " + a.held.size() + ", " + b.held.size() + "; saw " + (a.seen.size() + b.seen.size()) + ")",
          () -> { a.poll(); b.poll(); }, () -> a.held.size() == 1 && b.held.size() == 1 && a.seen.size() + b.seen.size() == produced);
      return produced + " records between two members, committed";
    });
    step("member-leaves", () -> {
      b.consumer.close();
      waitUntil(60_000, () -> "the remaining member to hold both partitions (holds " + a.held.size() + ")", a::poll, () -> a.held.size() == PARTITIONS);
      return "the remaining member took both partitions";
    });
    step("describe-group", () -> {
      ConsumerGroupDescription described = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
      check(described.groupState() == GroupState.STABLE && described.members().size() == 1, "state " + described.groupState() + ", " + described.members().size() + " members");
      long committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().values().stream().mapToLong(OffsetAndMetadata::offset).sum();
      check(committed == produced, "committed offsets add up to " + committed + ", not " + produced);
      return "Stable, 1 member, committed " + committed;
    });
    a.consumer.close();
  }

  private String listOffsets() throws Exception {
    long[] sums = new long[2];
    OffsetSpec[] specs = {OffsetSpec.earliest(), OffsetSpec.latest()};
    for (int s = 0; s < 2; s++) {
      Map<TopicPartition, OffsetSpec> ask = new HashMap<>();
      for (int p = 0; p < PARTITIONS; p++) ask.put(new TopicPartition(topic, p), specs[s]);
      for (var info : admin.listOffsets(ask).all().get().values()) sums[s] += info.offset();
    }
    check(sums[0] == 0 && sums[1] == produced, "earliest " + sums[0] + ", latest " + sums[1] + "; expected 0 and " + produced);
    return "earliest 0, latest " + sums[1];
  }

  private String transactions() throws Exception {
    String txTopic = prefix + "-tx";
    admin.createTopics(List.of(new NewTopic(txTopic, 1, (short) 1))).all().get();
    Map<String, Object> config = base();
    config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, prefix + "-tx");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
      producer.initTransactions();
      Object[][] txs = {{List.of("c0", "c1", "c2"), true}, {List.of("a0", "a1"), false}, {List.of("end"), true}};
      for (Object[] tx : txs) {
        producer.beginTransaction();
        for (Object value : (List<?>) tx[0]) producer.send(new ProducerRecord<>(txTopic, "k", (String) value)).get();
        if ((Boolean) tx[1]) producer.commitTransaction();
        else producer.abortTransaction();
      }
    }
    Map<String, Object> reader = base();
    reader.putAll(Report.map(ConsumerConfig.GROUP_ID_CONFIG, prefix + "-tx-reader", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest", ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
    List<String> read = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(reader, new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(List.of(txTopic));
      waitUntil(60_000, () -> "the last committed record (read " + read + ")", () -> consumer.poll(Duration.ofMillis(200)).forEach(r -> read.add(r.value())), () -> read.contains("end"));
    }
    check(read.equals(List.of("c0", "c1", "c2", "end")), "read_committed read " + read);
    return "committed read back, aborted skipped (read_committed)";
  }

  private String kip848() {
    Member m = new Member(prefix + "-kip848", Map.of(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer"));
    try {
      waitUntil(60_000, () -> "all " + produced + " records through a group.protocol=consumer member (saw " + m.seen.size() + ")", m::poll, () -> m.seen.size() == produced);
    } finally {
      m.consumer.close();
    }
    return m.seen.size() + " records, group.protocol=consumer";
  }
}
