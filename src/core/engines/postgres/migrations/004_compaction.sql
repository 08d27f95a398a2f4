-- Log compaction. Per partition, how far the compactor has compacted (Kafka's
-- cleaner checkpoint): offsets from cleaned_to on are dirty. The row goes with
-- its partition.
CREATE TABLE compaction_progress (
  partition_id  bigint PRIMARY KEY REFERENCES partitions (id) ON DELETE CASCADE,
  cleaned_to    bigint NOT NULL
);

-- A native pop of a compacted queue hands out offsets with gaps between them;
-- the lease lists them (null when they run on without a gap), so acks move the
-- group's position over the gaps.
ALTER TABLE leases ADD COLUMN delivered bigint[];
