-- Coordinator leases: each consumer group and each transactional id is
-- coordinated by one core node at a time. The owner renews its deadline; once
-- the deadline passes any node may take the lease, and the epoch goes up each
-- time the lease changes hands, so a write by an owner that lost it (checked
-- against owner and epoch in the write's own transaction) is refused.
CREATE TABLE coordinator_leases (
  kind text NOT NULL CHECK (kind IN ('group', 'transaction')),
  key text NOT NULL,
  owner text NOT NULL,
  epoch bigint NOT NULL,
  deadline bigint NOT NULL,
  PRIMARY KEY (kind, key)
);
CREATE INDEX coordinator_leases_owner ON coordinator_leases (owner);

-- A consumer group's membership as its coordinator last stored it (generation,
-- members, assignments): a coordinator that takes the group over loads it, as
-- Kafka's reloads group metadata from __consumer_offsets.
CREATE TABLE group_states (
  group_name text PRIMARY KEY,
  state jsonb NOT NULL,
  stored_at bigint NOT NULL
);
