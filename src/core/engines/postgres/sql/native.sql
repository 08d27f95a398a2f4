-- name: partition-by-name
SELECT p.id, p.idx, p.name, p.next_offset, p.log_start_offset
FROM partitions p WHERE p.queue_id = $1 AND p.name = $2;

-- name: queue-partitions
SELECT id, idx, name, next_offset, log_start_offset FROM partitions WHERE queue_id = $1 ORDER BY idx;

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
-- One popper or acker per partition and group at a time.
SELECT pg_advisory_xact_lock(3, hashtext($2 || ':' || $1::text));

-- name: try-lock-consumer
SELECT pg_try_advisory_xact_lock(3, hashtext($2 || ':' || $1::text)) AS locked;

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
