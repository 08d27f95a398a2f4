"""The compatibility matrix's aiokafka scenario: every codec (with the codec
libraries installed), transactions; no KIP-848, no share groups."""
import asyncio
import time

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from common import CODECS, PARTITIONS, PER_CODEC, Timeout, args, check, emit, unsupported

bootstrap, prefix = args()
topic, group = f"{prefix}-records", f"{prefix}-group"
state = {"produced": 0}


async def step(name, body):
    try:
        emit(name, "pass", await body() or "")
    except Exception as e:  # every failure is reported, none stops the program
        emit(name, "fail", f"{type(e).__name__}: {e}")


async def wait_until(condition, seconds, what, tick):
    deadline = time.monotonic() + seconds
    while True:
        await tick()
        if condition():
            return
        if time.monotonic() > deadline:
            raise Timeout(f"waited {seconds} s for {what()}")


class Member:
    """A group member polled by the main task, committing what it reads."""

    def __init__(self, group_id, target=topic, **extra):
        self.seen = []
        self.consumer = AIOKafkaConsumer(target, bootstrap_servers=bootstrap, group_id=group_id, auto_offset_reset="earliest",
                                         enable_auto_commit=False, session_timeout_ms=10000, heartbeat_interval_ms=500, **extra)

    async def poll(self):
        polled = await self.consumer.getmany(timeout_ms=100)
        for records in polled.values():
            self.seen.extend((r.partition, r.offset, r.value.decode()) for r in records)
        if polled:
            await self.consumer.commit()

    def held(self):
        return len([p for p in self.consumer.assignment() if p.topic == topic])


async def main():
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id=prefix)
    await admin.start()

    async def create_topic(name=topic, partitions=PARTITIONS):
        await admin.create_topics([NewTopic(name, partitions, 1)])
        return f"{partitions} partitions"
    await step("create-topic", create_topic)

    async def produce(codec):
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, compression_type=None if codec == "none" else codec)
        await producer.start()
        try:
            sent = [await producer.send(topic, key=f"k{i}".encode(), value=f"{codec}-{i}".encode()) for i in range(PER_CODEC)]
            await asyncio.gather(*sent)
        finally:
            await producer.stop()
        state["produced"] += PER_CODEC
        return f"{PER_CODEC} keyed records, idempotent"
    for codec in CODECS:
        await step(f"produce-{codec}", lambda codec=codec: produce(codec))

    a, b = Member(group), Member(group)
    seen = lambda: {(p, o) for p, o, _ in a.seen + b.seen}

    async def group_of_two():
        await a.consumer.start()
        await b.consumer.start()
        await wait_until(lambda: a.held() == 1 and b.held() == 1 and len(seen()) == state["produced"], 60,
                         lambda: f"both members holding one partition and all {state['produced']} records (held {a.held()}, {b.held()}; saw {len(seen())})",
                         lambda: asyncio.gather(a.poll(), b.poll()))
        return f"{len(seen())} records between two members, committed"
    await step("group-of-two", group_of_two)

    async def member_leaves():
        await b.consumer.stop()
        await wait_until(lambda: a.held() == PARTITIONS, 60, lambda: f"the remaining member to hold both partitions (holds {a.held()})", a.poll)
        return "the remaining member took both partitions"
    await step("member-leaves", member_leaves)

    async def describe_group():
        described = (await admin.describe_consumer_groups([group]))[0].groups[0]
        found = described.to_object() if hasattr(described, "to_object") else described
        state_name = next((v for v in (found.values() if isinstance(found, dict) else found) if v in ("Stable", "Empty", "PreparingRebalance", "CompletingRebalance", "Dead")), None)
        members = found["members"] if isinstance(found, dict) else found[5]
        check(state_name == "Stable" and len(members) == 1, f"state {state_name}, {len(members)} members")
        offsets = await admin.list_consumer_group_offsets(group)
        committed = sum(o.offset for tp, o in offsets.items() if tp.topic == topic)
        check(committed == state["produced"], f"committed offsets add up to {committed}, not {state['produced']}")
        return f"Stable, 1 member, committed {committed}"
    await step("describe-group", describe_group)
    await a.consumer.stop()

    async def list_offsets():
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
        await consumer.start()
        partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        try:
            low = sum((await consumer.beginning_offsets(partitions)).values())
            high = sum((await consumer.end_offsets(partitions)).values())
        finally:
            await consumer.stop()
        check(low == 0 and high == state["produced"], f"earliest {low}, latest {high}; expected 0 and {state['produced']}")
        return f"earliest 0, latest {high}"
    await step("list-offsets", list_offsets)

    async def transactions():
        tx_topic = f"{prefix}-tx"
        await create_topic(tx_topic, 1)
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"{prefix}-tx")
        await producer.start()
        try:
            for values, commit in ((["c0", "c1", "c2"], True), (["a0", "a1"], False), (["end"], True)):
                await producer.begin_transaction()
                for value in values:
                    await (await producer.send(tx_topic, key=b"k", value=value.encode()))
                await (producer.commit_transaction() if commit else producer.abort_transaction())
        finally:
            await producer.stop()
        reader = Member(f"{prefix}-tx-reader", tx_topic, isolation_level="read_committed")
        await reader.consumer.start()
        try:
            await wait_until(lambda: any(v == "end" for _, _, v in reader.seen), 60, lambda: f"the last committed record (read {reader.seen})", reader.poll)
        finally:
            await reader.consumer.stop()
        read = [v for _, _, v in reader.seen]
        check(read == ["c0", "c1", "c2", "end"], f"read_committed read {read}")
        return "committed read back, aborted skipped (read_committed)"
    await step("transactions", transactions)
    unsupported("kip848", "aiokafka speaks only the classic group protocol")
    unsupported("share-group", "aiokafka has no share consumer")
    await admin.close()


asyncio.run(main())
