-- name: commit-offsets
-- A plain commit comes after any pending transactional offset of the same
-- partitions: their transactions' commits must leave it (txn-commit-offsets).
WITH overtaken AS (
  UPDATE transaction_offsets t SET overtaken = true
  FROM unnest($2::text[], $3::int[]) AS c (queue_name, partition_idx)
  WHERE t.group_name = $1 AND t.queue_name = c.queue_name AND t.partition_idx = c.partition_idx
)
INSERT INTO group_offsets (group_name, queue_name, partition_idx, committed, leader_epoch, metadata)
SELECT $1, * FROM unnest($2::text[], $3::int[], $4::bigint[], $5::int[], $6::text[])
ON CONFLICT (group_name, queue_name, partition_idx) DO UPDATE
  SET committed = excluded.committed, leader_epoch = excluded.leader_epoch, metadata = excluded.metadata;

-- name: group-offsets-all
SELECT queue_name, partition_idx, committed, leader_epoch, metadata
FROM group_offsets WHERE group_name = $1
ORDER BY queue_name COLLATE "C", partition_idx;

-- name: group-offsets-some
SELECT wanted.ord, o.queue_name, o.partition_idx, o.committed, o.leader_epoch, o.metadata
FROM unnest($2::text[], $3::int[]) WITH ORDINALITY AS wanted (queue_name, idx, ord)
LEFT JOIN group_offsets o ON o.group_name = $1 AND o.queue_name = wanted.queue_name AND o.partition_idx = wanted.idx
ORDER BY wanted.ord;

-- name: delete-offsets
DELETE FROM group_offsets o
USING unnest($2::text[], $3::int[]) AS gone (queue_name, idx)
WHERE o.group_name = $1 AND o.queue_name = gone.queue_name AND o.partition_idx = gone.idx;

-- name: list-groups
SELECT group_name FROM (
  SELECT group_name FROM group_offsets
  UNION
  SELECT group_name FROM leases
) g
ORDER BY group_name COLLATE "C";
