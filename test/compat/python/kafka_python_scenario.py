"""The compatibility matrix's kafka-python scenario: every codec (with the
codec libraries installed), transactions; no KIP-848, no share groups."""
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

from common import CODECS, PARTITIONS, PER_CODEC, args, check, step, unsupported, wait_until

bootstrap, prefix = args()
topic, group = f"{prefix}-records", f"{prefix}-group"
admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id=prefix)
state = {"produced": 0}


def create_topic(name=topic, partitions=PARTITIONS):
    admin.create_topics([NewTopic(name, partitions, 1)])
    return f"{partitions} partitions"


def produce_codec(codec):
    producer = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, acks="all", compression_type=None if codec == "none" else codec)
    futures = [producer.send(topic, key=f"k{i}".encode(), value=f"{codec}-{i}".encode()) for i in range(PER_CODEC)]
    for future in futures:
        future.get(timeout=30)
    producer.close()
    state["produced"] += PER_CODEC
    return f"{PER_CODEC} keyed records, idempotent"


class Member:
    """A group member polled by the main thread, committing what it reads."""

    def __init__(self, group_id):
        self.seen = set()
        self.consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group_id, auto_offset_reset="earliest",
                                      enable_auto_commit=False, session_timeout_ms=10000, heartbeat_interval_ms=500)

    def poll(self):
        polled = self.consumer.poll(timeout_ms=100)
        for records in polled.values():
            for record in records:
                self.seen.add((record.partition, record.offset))
        if polled:
            self.consumer.commit()

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
    described = admin.describe_groups([group])
    found = described[group] if isinstance(described, dict) else described[0]
    found = found if isinstance(found, dict) else found._asdict()
    state_name = found.get("group_state", found.get("state"))
    check(state_name == "Stable" and len(found["members"]) == 1, f"state {state_name}, {len(found['members'])} members")
    offsets = admin.list_group_offsets({group: None})[group]
    committed = sum(o.offset for tp, o in offsets.items() if tp.topic == topic)
    check(committed == state["produced"], f"committed offsets add up to {committed}, not {state['produced']}")
    return f"Stable, 1 member, committed {committed}"


def list_offsets():
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    low, high = sum(consumer.beginning_offsets(partitions).values()), sum(consumer.end_offsets(partitions).values())
    consumer.close()
    check(low == 0 and high == state["produced"], f"earliest {low}, latest {high}; expected 0 and {state['produced']}")
    return f"earliest 0, latest {high}"


def transactions():
    tx_topic = f"{prefix}-tx"
    create_topic(tx_topic, 1)
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"{prefix}-tx")
    producer.init_transactions()
    for values, commit in ((["c0", "c1", "c2"], True), (["a0", "a1"], False), (["end"], True)):
        producer.begin_transaction()
        for value in values:
            producer.send(tx_topic, key=b"k", value=value.encode()).get(timeout=30)
        producer.commit_transaction() if commit else producer.abort_transaction()
    producer.close()
    consumer = KafkaConsumer(tx_topic, bootstrap_servers=bootstrap, group_id=f"{prefix}-tx-reader", auto_offset_reset="earliest", isolation_level="read_committed")
    read = []

    def tick():
        for records in consumer.poll(timeout_ms=200).values():
            read.extend(r.value.decode() for r in records)
    try:
        wait_until(lambda: "end" in read, 60, lambda: f"the last committed record (read {read})", tick=tick)
    finally:
        consumer.close()
    check(read == ["c0", "c1", "c2", "end"], f"read_committed read {read}")
    return "committed read back, aborted skipped (read_committed)"


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
unsupported("kip848", "kafka-python speaks only the classic group protocol")
unsupported("share-group", "kafka-python has no share consumer")
admin.close()
