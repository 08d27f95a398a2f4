-- name: txn-lock
-- A transactional id's row, locked: every coordinator call on one id runs
-- one at a time, whichever core it reaches.
SELECT transactional_id, producer_id, producer_epoch, timeout_ms, state, started_at, last_producer_epoch
FROM transactional_producers WHERE transactional_id = $1 FOR UPDATE;

-- name: txn-get
SELECT transactional_id, producer_id, producer_epoch, timeout_ms, state, started_at, last_producer_epoch
FROM transactional_producers WHERE transactional_id = $1;

-- name: txn-set
INSERT INTO transactional_producers (transactional_id, producer_id, producer_epoch, timeout_ms, state, started_at, last_producer_epoch)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (transactional_id) DO UPDATE
  SET producer_id = excluded.producer_id, producer_epoch = excluded.producer_epoch, timeout_ms = excluded.timeout_ms,
      state = excluded.state, started_at = excluded.started_at, last_producer_epoch = excluded.last_producer_epoch;

-- name: txn-clear
-- A new transaction starts with no partitions, groups or offsets.
WITH p AS (DELETE FROM transaction_partitions WHERE transactional_id = $1),
     g AS (DELETE FROM transaction_groups WHERE transactional_id = $1)
DELETE FROM transaction_offsets WHERE transactional_id = $1;

-- name: txn-add-partitions
INSERT INTO transaction_partitions (transactional_id, partition_id)
SELECT $1, unnest($2::bigint[])
ON CONFLICT DO NOTHING;

-- name: txn-has-partitions
SELECT partition_id FROM transaction_partitions WHERE transactional_id = $1 AND partition_id = ANY($2::bigint[]);

-- name: txn-add-group
INSERT INTO transaction_groups (transactional_id, group_name) VALUES ($1, $2) ON CONFLICT DO NOTHING;

-- name: txn-has-group
SELECT 1 AS found FROM transaction_groups WHERE transactional_id = $1 AND group_name = $2;

-- name: txn-put-offsets
INSERT INTO transaction_offsets (transactional_id, group_name, queue_name, partition_idx, committed, leader_epoch, metadata)
SELECT $1, $2, * FROM unnest($3::text[], $4::int[], $5::bigint[], $6::int[], $7::text[])
ON CONFLICT (transactional_id, group_name, queue_name, partition_idx) DO UPDATE
  SET committed = excluded.committed, leader_epoch = excluded.leader_epoch, metadata = excluded.metadata, overtaken = false;

-- name: txn-partitions
-- The open transaction's partitions, locked in id order (as appends lock
-- them), with where each stands.
SELECT p.id, p.idx, p.next_offset, q.name AS queue_name, t.first_offset
FROM transaction_partitions t
JOIN partitions p ON p.id = t.partition_id
JOIN queues q ON q.id = p.queue_id
WHERE t.transactional_id = $1
ORDER BY p.id
FOR UPDATE OF p;

-- name: txn-describe-partitions
SELECT q.name AS queue_name, p.idx
FROM transaction_partitions t
JOIN partitions p ON p.id = t.partition_id
JOIN queues q ON q.id = p.queue_id
WHERE t.transactional_id = $1
ORDER BY q.name, p.idx;

-- name: txn-record-aborted
INSERT INTO aborted_transactions (partition_id, producer_id, first_offset, last_offset)
SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]);

-- name: txn-commit-offsets
-- The transaction's offsets become the groups' committed offsets, except
-- those a plain commit came after: Kafka keeps the most recently written one.
INSERT INTO group_offsets (group_name, queue_name, partition_idx, committed, leader_epoch, metadata)
SELECT group_name, queue_name, partition_idx, committed, leader_epoch, metadata
FROM transaction_offsets WHERE transactional_id = $1 AND NOT overtaken
ON CONFLICT (group_name, queue_name, partition_idx) DO UPDATE
  SET committed = excluded.committed, leader_epoch = excluded.leader_epoch, metadata = excluded.metadata;

-- name: txn-by-producers
-- The transactions of an append's transactional producers, with whether each
-- holds the appended partitions ($2).
SELECT t.transactional_id, t.producer_id, t.producer_epoch, t.state,
       coalesce(array_agg(tp.partition_id) FILTER (WHERE tp.partition_id IS NOT NULL), '{}') AS partition_ids
FROM transactional_producers t
LEFT JOIN transaction_partitions tp ON tp.transactional_id = t.transactional_id AND tp.partition_id = ANY($2::bigint[])
WHERE t.producer_id = ANY($1::bigint[])
GROUP BY t.transactional_id, t.producer_id, t.producer_epoch, t.state;

-- name: txn-first-offsets
-- A transaction's first batch on a partition marks where it begins there.
UPDATE transaction_partitions t SET first_offset = f.first_offset
FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS f (transactional_id, partition_id, first_offset)
WHERE t.transactional_id = f.transactional_id AND t.partition_id = f.partition_id AND t.first_offset IS NULL;

-- name: txn-open-offsets
-- Per partition, the first offset of its earliest open transaction (null when none).
SELECT wanted.id, (SELECT min(first_offset) FROM transaction_partitions t WHERE t.partition_id = wanted.id AND t.first_offset IS NOT NULL) AS first_offset
FROM unnest($1::bigint[]) WITH ORDINALITY AS wanted (id, ord)
ORDER BY wanted.ord;

-- name: txn-producer-open-offsets
-- The open transactions' first offsets on one partition, by producer (DescribeProducers).
SELECT tr.producer_id, t.first_offset
FROM transaction_partitions t JOIN transactional_producers tr ON tr.transactional_id = t.transactional_id
WHERE t.partition_id = $1 AND t.first_offset IS NOT NULL;

-- name: txn-aborted-in-range
SELECT producer_id, first_offset, last_offset FROM aborted_transactions
WHERE partition_id = $1 AND last_offset >= $2 AND first_offset < $3
ORDER BY first_offset;

-- name: txn-aborted-in-ranges
-- The same for every partition of a Fetch at once: partition ids ($1),
-- fetch offsets ($2), the offsets read up to ($3).
SELECT r.ord, a.producer_id, a.first_offset
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS r (partition_id, from_offset, up_to, ord)
JOIN aborted_transactions a ON a.partition_id = r.partition_id AND a.last_offset >= r.from_offset AND a.first_offset < r.up_to
ORDER BY r.ord, a.first_offset;

-- name: txn-aborted-from
-- The aborted ranges a native reader from `position` may meet.
SELECT producer_id, first_offset, last_offset FROM aborted_transactions
WHERE partition_id = $1 AND last_offset > $2
ORDER BY first_offset;

-- name: txn-list
SELECT transactional_id, producer_id, producer_epoch, timeout_ms, state, started_at, last_producer_epoch FROM transactional_producers
WHERE (cardinality($1::text[]) = 0 OR state = ANY($1::text[]))
  AND (cardinality($2::bigint[]) = 0 OR producer_id = ANY($2::bigint[]))
ORDER BY transactional_id;

-- name: txn-unstable
-- Partitions with offsets pending in an open transaction, for a group.
SELECT DISTINCT o.queue_name, o.partition_idx FROM transaction_offsets o
JOIN transactional_producers t ON t.transactional_id = o.transactional_id AND t.state = 'Ongoing'
WHERE o.group_name = $1;

-- name: txn-expired
-- Open transactions past their timeout; each is then aborted under its own lock.
SELECT transactional_id FROM transactional_producers
WHERE state = 'Ongoing' AND started_at >= 0 AND started_at + timeout_ms < $1
ORDER BY started_at
LIMIT 100;

-- name: txn-trim-aborted
-- Aborted ranges wholly before a partition's log start are no longer read,
-- nor those of deleted partitions.
DELETE FROM aborted_transactions a
WHERE NOT EXISTS (SELECT 1 FROM partitions p WHERE p.id = a.partition_id AND p.log_start_offset <= a.last_offset);

-- name: txn-marker-windows
-- A producer whose only write to a partition is a marker gets an empty
-- producer window there (rules: markerOnlyWindow); one it already has stays.
INSERT INTO producer_windows (partition_id, producer_id, producer_epoch, retained, last_timestamp)
SELECT unnest($1::bigint[]), $2, $3, '[]'::jsonb, $4
ON CONFLICT (partition_id, producer_id) DO NOTHING;

-- name: copied-txn-open-offsets
-- The open copied transactions (appendAt) of the given partitions and
-- producers: rows of transaction_partitions under a reserved id per producer
-- (copiedTxnId), so every last-stable-offset query counts them.
SELECT partition_id, transactional_id, first_offset FROM transaction_partitions
WHERE (partition_id, transactional_id) IN (SELECT * FROM unnest($1::bigint[], $2::text[]))
  AND first_offset IS NOT NULL;

-- name: copied-txn-set
-- A copy's outcome per partition and producer: the open copied transaction's
-- first offset, or (null) none open, so the row goes.
WITH wanted AS (
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS w (partition_id, transactional_id, first_offset)
), gone AS (
  DELETE FROM transaction_partitions t USING wanted w
  WHERE w.first_offset IS NULL AND t.partition_id = w.partition_id AND t.transactional_id = w.transactional_id
)
INSERT INTO transaction_partitions (transactional_id, partition_id, first_offset)
SELECT transactional_id, partition_id, first_offset FROM wanted WHERE first_offset IS NOT NULL
ON CONFLICT (transactional_id, partition_id) DO UPDATE SET first_offset = excluded.first_offset;
