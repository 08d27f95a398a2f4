-- Kafka's transaction coordinator: per transactional id (the existing
-- transactional_producers row) its state and when its open transaction began,
-- the partitions and groups in that transaction, the offsets it will commit,
-- and per partition the aborted-transactions index read_committed Fetch needs.

ALTER TABLE transactional_producers
  ADD COLUMN state text NOT NULL DEFAULT 'Empty',
  -- Epoch ms the open transaction began; -1 when none is open.
  ADD COLUMN started_at bigint NOT NULL DEFAULT -1;
CREATE INDEX transactional_producers_producer ON transactional_producers (producer_id);
-- The timeout sweep reads only open transactions.
CREATE INDEX transactional_producers_open ON transactional_producers (started_at) WHERE state = 'Ongoing';

-- The partitions of each open transaction. first_offset is set by the
-- transaction's first batch on the partition (under the partition's lock):
-- the partition's last stable offset is the least first_offset on it.
CREATE TABLE transaction_partitions (
  transactional_id  text NOT NULL,
  partition_id      bigint NOT NULL,
  first_offset      bigint,
  PRIMARY KEY (transactional_id, partition_id)
);
CREATE INDEX transaction_partitions_open ON transaction_partitions (partition_id, first_offset) WHERE first_offset IS NOT NULL;

CREATE TABLE transaction_groups (
  transactional_id  text NOT NULL,
  group_name        text NOT NULL,
  PRIMARY KEY (transactional_id, group_name)
);

-- TxnOffsetCommit's offsets, written to group_offsets at commit, dropped at abort.
CREATE TABLE transaction_offsets (
  transactional_id  text NOT NULL,
  group_name        text NOT NULL,
  queue_name        text NOT NULL,
  partition_idx     integer NOT NULL,
  committed         bigint NOT NULL,
  leader_epoch      integer NOT NULL,
  metadata          text,
  PRIMARY KEY (transactional_id, group_name, queue_name, partition_idx)
);
CREATE INDEX transaction_offsets_group ON transaction_offsets (group_name, queue_name, partition_idx);

-- Per partition, each aborted transaction's producer, first offset and the
-- offset of its abort marker.
CREATE TABLE aborted_transactions (
  partition_id  bigint NOT NULL,
  producer_id   bigint NOT NULL,
  first_offset  bigint NOT NULL,
  last_offset   bigint NOT NULL,
  PRIMARY KEY (partition_id, last_offset)
);
