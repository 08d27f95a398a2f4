-- name: queue-row
-- A queue without its partitions (describe-queues lists them all: thousands on a wide queue).
SELECT id, name, config, created_at FROM queues WHERE name = $1;

-- name: partition-by-name
SELECT p.id, p.idx, p.name, p.next_offset, p.log_start_offset
FROM partitions p WHERE p.queue_id = $1 AND p.name = $2;

-- name: create-named-partition
-- A partition pushed natively under a new name gets the next free index. The
-- caller holds the queue's row lock, so no one else is handing one out.
INSERT INTO partitions (queue_id, idx, name)
SELECT $1, coalesce(max(idx) + 1, 0), $2 FROM partitions WHERE queue_id = $1
RETURNING id, idx, name, next_offset, log_start_offset;

-- name: lock-partitions-by-id
SELECT id, idx, name, next_offset, log_start_offset FROM partitions
WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE;

-- name: dedup-hits
SELECT id_hash, message_id, message_offset FROM dedup_index
WHERE partition_id = $1 AND id_hash = ANY($2::bytea[]) AND stored_at > $3;

-- name: lease-for-update
SELECT id, owner, deadline, from_offset, to_offset, acked, delivered FROM leases
WHERE partition_id = $1 AND group_name = $2 FOR UPDATE;

-- name: lock-consumer
-- One popper or acker per partition and group at a time. Advisory locks are
-- the whole database's: the schema is in the key, so a core in another
-- schema (its partition ids start at 1 too) never makes a pop pass over a
-- partition it has no business with.
SELECT pg_advisory_xact_lock(3, hashtext(current_schema() || ':' || $2 || ':' || $1::text));

-- name: insert-lease
INSERT INTO leases (id, partition_id, group_name, owner, deadline, from_offset, to_offset, delivered)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (partition_id, group_name) DO UPDATE
  SET id = excluded.id, owner = excluded.owner, deadline = excluded.deadline,
      from_offset = excluded.from_offset, to_offset = excluded.to_offset, acked = '{}', delivered = excluded.delivered;

-- name: delete-lease
DELETE FROM leases WHERE partition_id = $1 AND group_name = $2;

-- name: set-lease-acked
UPDATE leases SET acked = $3 WHERE partition_id = $1 AND group_name = $2;

-- name: lease-by-id
SELECT l.id, l.partition_id, l.group_name, l.owner, l.deadline, p.name AS partition_name, q.name AS queue_name
FROM leases l JOIN partitions p ON p.id = l.partition_id JOIN queues q ON q.id = p.queue_id
WHERE l.id = $1 FOR UPDATE OF l;

-- name: extend-lease
UPDATE leases SET deadline = $2 WHERE id = $1;

-- name: group-position
SELECT committed FROM group_offsets WHERE group_name = $1 AND queue_name = $2 AND partition_idx = $3;

-- name: others-lowest-position
SELECT min(committed) AS lowest FROM group_offsets WHERE group_name <> $1 AND queue_name = $2 AND partition_idx = $3;

-- name: set-group-position
INSERT INTO group_offsets (group_name, queue_name, partition_idx, committed, leader_epoch, metadata)
VALUES ($1, $2, $3, $4, -1, NULL)
ON CONFLICT (group_name, queue_name, partition_idx) DO UPDATE
  SET committed = excluded.committed, leader_epoch = -1, metadata = NULL;

-- name: newest-append
-- When the partition last received records (Queen's window buffer waits for it to go quiet).
SELECT appended_at FROM batches WHERE partition_id = $1 ORDER BY base_offset DESC LIMIT 1;

-- name: write-acks
-- A transaction's acks in one statement, the last write of each (partition,
-- group): its position moved, its lease kept with the offsets acked ahead of
-- the position, or deleted when it ended. $7 holds each kept lease's acked
-- offsets as array text ('{3,5}').
WITH w AS (
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::integer[], $5::bigint[], $6::boolean[], $7::text[])
    AS w (partition_id, group_name, queue_name, partition_idx, position, dropped, acked)
), positions AS (
  INSERT INTO group_offsets (group_name, queue_name, partition_idx, committed, leader_epoch, metadata)
  SELECT group_name, queue_name, partition_idx, position, -1, NULL FROM w WHERE position IS NOT NULL
  ON CONFLICT (group_name, queue_name, partition_idx) DO UPDATE
    SET committed = excluded.committed, leader_epoch = -1, metadata = NULL
  RETURNING 1
), kept AS (
  UPDATE leases l SET acked = w.acked::bigint[] FROM w
  WHERE NOT w.dropped AND l.partition_id = w.partition_id AND l.group_name = w.group_name
  RETURNING 1
), ended AS (
  DELETE FROM leases l USING w
  WHERE w.dropped AND l.partition_id = w.partition_id AND l.group_name = w.group_name
  RETURNING 1
)
SELECT (SELECT count(*) FROM positions) + (SELECT count(*) FROM kept) + (SELECT count(*) FROM ended) AS written;

-- name: claim-pop-candidate
-- The first partition of a queue ($1), in index order after $5 (only the one
-- named $6 when it is not null), that may have records for a group ($2, on
-- queue name $3) now ($4): records past both the group's position and the log
-- start, no live lease of the group, and its consumer lock free, taken here
-- (see lock-consumer). One statement instead of a look at every partition;
-- the pop then decides the partition under the lock, with fresh reads. The
-- lock is a volatile filter over the ordered candidates, so it is tried one
-- candidate at a time and stops at the first it takes.
SELECT c.id, c.idx, c.name, c.next_offset, c.log_start_offset
FROM (
  SELECT p.id, p.idx, p.name, p.next_offset, p.log_start_offset
  FROM partitions p
  LEFT JOIN group_offsets g ON g.group_name = $2 AND g.queue_name = $3 AND g.partition_idx = p.idx
  WHERE p.queue_id = $1 AND p.idx > $5 AND ($6::text IS NULL OR p.name = $6)
    AND p.next_offset > greatest(coalesce(g.committed, 0), p.log_start_offset)
    AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.partition_id = p.id AND l.group_name = $2 AND l.deadline > $4)
  ORDER BY p.idx
  OFFSET 0
) c
WHERE pg_try_advisory_xact_lock(3, hashtext(current_schema() || ':' || $2 || ':' || c.id::text))
LIMIT 1;
