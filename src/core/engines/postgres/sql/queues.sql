-- name: describe-queues
-- Every queue (or the one named) with its partitions in index order.
SELECT q.id, q.name, q.config, q.created_at,
       coalesce(json_agg(json_build_object('index', p.idx, 'name', p.name) ORDER BY p.idx)
                FILTER (WHERE p.id IS NOT NULL), '[]') AS partitions
FROM queues q
LEFT JOIN partitions p ON p.queue_id = q.id
WHERE $1::text IS NULL OR q.name = $1
GROUP BY q.id
ORDER BY q.name COLLATE "C";

-- name: insert-queue
INSERT INTO queues (id, name, config, created_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (name) DO NOTHING
RETURNING id;

-- name: lock-queue
-- Taken before a queue's partitions change or it is deleted, so indexes are
-- handed out one at a time.
SELECT id, name, config, created_at FROM queues WHERE name = $1 FOR UPDATE;

-- name: insert-partitions
INSERT INTO partitions (queue_id, idx, name)
SELECT $1, idx, name FROM unnest($2::int[], $3::text[]) AS t (idx, name);

-- name: partition-count-and-names
SELECT count(*)::int AS count,
       coalesce(array_agg(name) FILTER (WHERE idx >= $2), '{}') AS names_at_or_after
FROM partitions WHERE queue_id = $1;

-- name: partition-name-taken
SELECT name FROM partitions WHERE queue_id = $1 AND name = ANY($2::text[]);

-- name: update-queue-config
UPDATE queues SET config = $2 WHERE id = $1;

-- name: delete-queue
-- Batches, windows, dedup rows and leases have no foreign key (appends stay
-- cheap), so they go explicitly; partitions go by cascade.
WITH gone AS (SELECT id FROM partitions WHERE queue_id = $1),
     b AS (DELETE FROM batches WHERE partition_id IN (SELECT id FROM gone)),
     w AS (DELETE FROM producer_windows WHERE partition_id IN (SELECT id FROM gone)),
     d AS (DELETE FROM dedup_index WHERE partition_id IN (SELECT id FROM gone)),
     l AS (DELETE FROM leases WHERE partition_id IN (SELECT id FROM gone)),
     g AS (DELETE FROM group_offsets WHERE queue_name = $2)
DELETE FROM queues WHERE id = $1;
