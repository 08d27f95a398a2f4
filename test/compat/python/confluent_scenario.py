"""The compatibility matrix's confluent-kafka (librdkafka) scenario: every
codec, transactions, KIP-848 and the share consumer (KIP-932)."""
import time

from confluent_kafka import Consumer, ConsumerGroupState, ConsumerGroupTopicPartitions, Message, Producer, ShareConsumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from common import CODECS, PARTITIONS, PER_CODEC, args, check, step, unsupported, wait_until

bootstrap, prefix = args()
topic, group = f"{prefix}-records", f"{prefix}-group"
base = {"bootstrap.servers": bootstrap, "client.id": prefix}
admin = AdminClient(base)
state = {"produced": 0}


def create_topic():
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    wait_until(lambda: len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == PARTITIONS, 30, "the topic in metadata")
    return f"{PARTITIONS} partitions"


def produce(codec, values, target=None, extra=None):
    producer = Producer({**base, "enable.idempotence": True, "compression.type": codec, **(extra or {})})
    errors = []
    for i, value in enumerate(values):
        producer.produce(target or topic, key=f"k{i}", value=value, on_delivery=lambda err, _m: err and errors.append(str(err)))
    left = producer.flush(30)
    check(left == 0 and not errors, f"{left} undelivered, errors {errors[:3]}")


def produce_codec(codec):
    produce(codec, [f"{codec}-{i}" for i in range(PER_CODEC)])
    state["produced"] += PER_CODEC
    return f"{PER_CODEC} keyed records, idempotent"


class Member:
    """A group member polled by the main thread, committing each record it reads."""

    def __init__(self, group_id, extra=None):
        self.seen = set()
        self.consumer = Consumer({**base, "group.id": group_id, "auto.offset.reset": "earliest", "enable.auto.commit": False, **(extra or {})})
        self.consumer.subscribe([topic])

    def poll(self):
        message = self.consumer.poll(0.05)
        if message is not None and message.error() is None:
            self.seen.add((message.partition(), message.offset()))
            self.consumer.commit(message, asynchronous=False)

    def held(self):
        return len([p for p in self.consumer.assignment() if p.topic == topic])


members = {}


def group_of_two():
    a, b = members["a"], members["b"] = Member(group), Member(group)
    seen = lambda: a.seen | b.seen
    wait_until(lambda: a.held() == 1 and b.held() == 1 and len(seen()) == state["produced"], 60,
               lambda: f"both members holding one partition and all {state['produced']} records (held {a.held()}, {b.held()}; saw {len(seen())})",
               tick=lambda: (a.poll(), b.poll()))
    return f"{len(seen())} records between two members, committed"


def member_leaves():
    a, b = members["a"], members["b"]
    b.consumer.close()
    wait_until(lambda: a.held() == PARTITIONS, 60, lambda: f"the remaining member to hold both partitions (holds {a.held()})", tick=a.poll)
    return "the remaining member took both partitions"


def describe_group():
    described = admin.describe_consumer_groups([group])[group].result(30)
    check(described.state == ConsumerGroupState.STABLE and len(described.members) == 1, f"state {described.state}, {len(described.members)} members")
    offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
    committed = sum(p.offset for p in offsets.topic_partitions if p.topic == topic)
    check(committed == state["produced"], f"committed offsets add up to {committed}, not {state['produced']}")
    return f"Stable, 1 member, committed {committed}"


def list_offsets():
    total = {}
    for name, spec in (("earliest", OffsetSpec.earliest()), ("latest", OffsetSpec.latest())):
        found = admin.list_offsets({TopicPartition(topic, p): spec for p in range(PARTITIONS)})
        total[name] = sum(f.result(30).offset for f in found.values())
    check(total == {"earliest": 0, "latest": state["produced"]}, f"offsets {total}, expected earliest 0 and latest {state['produced']}")
    return f"earliest 0, latest {total['latest']}"


def read_all(target, group_id, until, extra=None, seconds=60):
    consumer = Consumer({**base, "group.id": group_id, "auto.offset.reset": "earliest", **(extra or {})})
    consumer.subscribe([target])
    read = []

    def tick():
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            read.append(message.value().decode())
    try:
        wait_until(lambda: until(read), seconds, lambda: f"records of {target} (read {len(read)})", tick=tick)
    finally:
        consumer.close()
    return read


def transactions():
    tx_topic = f"{prefix}-tx"
    admin.create_topics([NewTopic(tx_topic, 1, 1)])[tx_topic].result(30)
    producer = Producer({**base, "transactional.id": f"{prefix}-tx"})
    producer.init_transactions(30)
    for values, commit in ((["c0", "c1", "c2"], True), (["a0", "a1"], False), (["end"], True)):
        producer.begin_transaction()
        for value in values:
            producer.produce(tx_topic, key="k", value=value)
        producer.flush(30)
        (producer.commit_transaction if commit else producer.abort_transaction)(30)
    read = read_all(tx_topic, f"{prefix}-tx-reader", lambda r: "end" in r, {"isolation.level": "read_committed"})
    check(read == ["c0", "c1", "c2", "end"], f"read_committed read {read}")
    return "committed read back, aborted skipped (read_committed)"


def kip848():
    member = Member(f"{prefix}-kip848", {"group.protocol": "consumer"})
    try:
        wait_until(lambda: len(member.seen) == state["produced"], 60, lambda: f"all {state['produced']} records through a group.protocol=consumer member (saw {len(member.seen)})", tick=member.poll)
    finally:
        member.consumer.close()
    return f"{len(member.seen)} records, group.protocol=consumer"


def share_group():
    share_topic = f"{prefix}-share"
    admin.create_topics([NewTopic(share_topic, 1, 1)])[share_topic].result(30)
    consumer = ShareConsumer({**base, "group.id": f"{prefix}-share"})
    consumer.subscribe([share_topic])
    read = []

    def tick():
        polled = consumer.poll(0.2)
        for message in [polled] if isinstance(polled, Message) else list(polled or []):
            if message.error() is None:
                read.append(message.value().decode())
    try:
        # A share group starts at the latest offset: produce until the member reads, then the batch it must read whole.
        deadline = time.monotonic() + 30
        while not read and time.monotonic() < deadline:
            produce("none", ["warm-up"], share_topic)
            wait_until(lambda: True, 1, "", tick=tick)
        check(read, "the share consumer read nothing in 30 s")
        produce("none", [f"s{i}" for i in range(PER_CODEC)], share_topic)
        wait_until(lambda: all(f"s{i}" in read for i in range(PER_CODEC)), 60, lambda: f"the {PER_CODEC} records (read {read})", tick=tick)
    finally:
        consumer.close()
    return f"{PER_CODEC} records acquired and acknowledged (implicit mode)"


step("create-topic", create_topic)
for codec in CODECS:
    step(f"produce-{codec}", lambda codec=codec: produce_codec(codec))
step("group-of-two", group_of_two)
step("member-leaves", member_leaves)
step("describe-group", describe_group)
if "a" in members:
    members["a"].consumer.close()
step("list-offsets", list_offsets)
step("transactions", transactions)
step("kip848", kip848)
step("share-group", share_group)
