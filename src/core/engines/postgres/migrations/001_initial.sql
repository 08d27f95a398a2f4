-- The core's tables. Times are epoch milliseconds (bigint), like the Core
-- interface, so no time zone ever enters an answer.

CREATE TABLE queues (
  id          uuid PRIMARY KEY,
  name        text NOT NULL UNIQUE,
  config      jsonb NOT NULL,
  created_at  bigint NOT NULL
);

-- One row per partition; its row lock (SELECT ... FOR UPDATE) serializes
-- appends and decides offsets. next_offset is the high watermark.
CREATE TABLE partitions (
  id                bigserial PRIMARY KEY,
  queue_id          uuid NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
  idx               integer NOT NULL,
  name              text NOT NULL,
  log_start_offset  bigint NOT NULL DEFAULT 0,
  next_offset       bigint NOT NULL DEFAULT 0,
  UNIQUE (queue_id, idx),
  UNIQUE (queue_id, name)
);

-- Kafka RecordBatch v2 bytes, verbatim but for baseOffset. No foreign key:
-- the partition row is already locked by the append, and deleting a queue
-- removes its batches explicitly.
CREATE TABLE batches (
  partition_id   bigint NOT NULL,
  base_offset    bigint NOT NULL,
  next_offset    bigint NOT NULL,
  max_timestamp  bigint NOT NULL,
  appended_at    bigint NOT NULL,
  size           integer NOT NULL,
  bytes          bytea NOT NULL,
  PRIMARY KEY (partition_id, base_offset)
);
-- Producers often compress their batches already; pglz would burn CPU on
-- every append for little gain.
ALTER TABLE batches ALTER COLUMN bytes SET STORAGE EXTERNAL;

-- The idempotent producer's window per producer and partition (the last five
-- batches), written in the same transaction as the append it describes.
CREATE TABLE producer_windows (
  partition_id    bigint NOT NULL,
  producer_id     bigint NOT NULL,
  producer_epoch  integer NOT NULL,
  retained        jsonb NOT NULL,
  last_timestamp  bigint NOT NULL,
  PRIMARY KEY (partition_id, producer_id)
);

CREATE SEQUENCE producer_ids START 1;

-- Every producer id handed out with its current epoch, so a producer may bump
-- its own epoch (KIP-360) from any gateway.
CREATE TABLE producers (
  producer_id     bigint PRIMARY KEY,
  producer_epoch  integer NOT NULL
);

CREATE TABLE transactional_producers (
  transactional_id  text PRIMARY KEY,
  producer_id       bigint NOT NULL,
  producer_epoch    integer NOT NULL,
  timeout_ms        integer NOT NULL
);

-- The append ledger: a retried append call (same requestId) answers the first
-- result. Bounded by age; the reaper trims it.
CREATE TABLE append_ledger (
  request_id  text PRIMARY KEY,
  result      jsonb NOT NULL,
  created_at  bigint NOT NULL
);
CREATE INDEX append_ledger_age ON append_ledger (created_at);

-- Native push dedup index: per partition, keyed by a SHA-256 of the
-- transactionId because an id may be 65,535 bytes, far past a btree entry.
CREATE TABLE dedup_index (
  partition_id    bigint NOT NULL,
  id_hash         bytea NOT NULL,
  transaction_id  text NOT NULL,
  message_id      text NOT NULL,
  message_offset  bigint NOT NULL,
  stored_at       bigint NOT NULL,
  PRIMARY KEY (partition_id, id_hash)
);
CREATE INDEX dedup_index_age ON dedup_index (stored_at);

-- A Kafka group's committed offsets and a Queen group's position are one row.
CREATE TABLE group_offsets (
  group_name      text NOT NULL,
  queue_name      text NOT NULL,
  partition_idx   integer NOT NULL,
  committed       bigint NOT NULL,
  leader_epoch    integer NOT NULL,
  metadata        text,
  PRIMARY KEY (group_name, queue_name, partition_idx)
);

-- Native consume leases: one per partition and group, with owner and deadline.
CREATE TABLE leases (
  id              uuid PRIMARY KEY,
  partition_id    bigint NOT NULL,
  group_name      text NOT NULL,
  owner           text NOT NULL,
  deadline        bigint NOT NULL,
  from_offset     bigint NOT NULL,
  to_offset       bigint NOT NULL,
  -- Offsets completed out of order, ahead of the group's position.
  acked           bigint[] NOT NULL DEFAULT '{}',
  UNIQUE (partition_id, group_name)
);

CREATE TABLE kv (
  ns          text NOT NULL,
  key         text NOT NULL,
  -- json, not jsonb: a value comes back exactly as written, key order included.
  value       json NOT NULL,
  version     bigint NOT NULL,
  expires_at  bigint,
  PRIMARY KEY (ns, key)
);
CREATE INDEX kv_expiry ON kv (expires_at) WHERE expires_at IS NOT NULL;
