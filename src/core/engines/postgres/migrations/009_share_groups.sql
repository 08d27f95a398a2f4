-- Share groups (KIP-932): each share-partition's state as the core last
-- decided it: the start offset (every record below it is done) and the
-- in-flight records from there, each [offset, state, delivery count, lock
-- owner, lock deadline in epoch ms]. The lock is the core's lease on the
-- record; it is stored here, so it outlives the gateway that took it and any
-- core can end it once its deadline passes.
CREATE TABLE share_partitions (
  group_name text NOT NULL,
  queue text NOT NULL,
  partition integer NOT NULL,
  start_offset bigint NOT NULL,
  records jsonb NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (group_name, queue, partition)
);
