package queen.compat;

import static queen.compat.Report.*;

import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** The share-group step: a KafkaShareConsumer reads records produced after it joined and acknowledges them (implicit mode). */
final class ShareStep {
  private final String bootstrap;
  private final String prefix;
  private final Admin admin;

  ShareStep(String bootstrap, String prefix, Admin admin) {
    this.bootstrap = bootstrap;
    this.prefix = prefix;
    this.admin = admin;
  }

  String run() throws Exception {
    String topic = prefix + "-share";
    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
    Set<String> read = new HashSet<>();
    Map<String, Object> config = map(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ConsumerConfig.GROUP_ID_CONFIG, prefix + "-share");
    try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(config, new StringDeserializer(), new StringDeserializer());
        KafkaProducer<String, String> producer = new KafkaProducer<>(map(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap), new StringSerializer(), new StringSerializer())) {
      consumer.subscribe(List.of(topic));
      Runnable tick = () -> consumer.poll(Duration.ofMillis(200)).forEach(r -> read.add(r.value()));
      // A share group starts at the latest offset: produce until the member reads, then the batch it must read whole.
      long deadline = System.currentTimeMillis() + 30_000;
      while (read.isEmpty() && System.currentTimeMillis() < deadline) {
        producer.send(new ProducerRecord<>(topic, "k", "warm-up")).get();
        for (int i = 0; i < 5; i++) tick.run();
      }
      check(!read.isEmpty(), "the share consumer read nothing in 30 s");
      List<String> values = new ArrayList<>();
      for (int i = 0; i < PER_CODEC; i++) values.add("s" + i);
      for (String v : values) producer.send(new ProducerRecord<>(topic, "k", v)).get();
      waitUntil(60_000, () -> "the " + PER_CODEC + " records (read " + read + ")", tick, () -> read.containsAll(values));
      consumer.commitSync();
    }
    return PER_CODEC + " records acquired and acknowledged (implicit mode)";
  }
}
