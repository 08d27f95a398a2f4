-- name: lock-partitions
-- The partitions an append touches, locked in id order so two appends that
-- share partitions never deadlock. The lock decides offsets.
SELECT p.id, p.idx, p.name, p.next_offset, p.log_start_offset, q.id AS queue_id, q.name AS queue_name, q.config
FROM unnest($1::text[], $2::int[]) AS wanted (queue_name, idx)
JOIN queues q ON q.name = wanted.queue_name
JOIN partitions p ON p.queue_id = q.id AND p.idx = wanted.idx
ORDER BY p.id
FOR UPDATE OF p;

-- name: existing-queues
SELECT name, (SELECT count(*)::int FROM partitions p WHERE p.queue_id = q.id) AS partition_count
FROM queues q WHERE name = ANY($1::text[]);

-- name: find-partitions
-- Looks partitions up by (queue, index) without locking; a missing queue or
-- partition comes back as nulls in its row. The queue's partition count is
-- only for a missing partition's error: counted for every row, a Fetch of
-- 64 partitions (every long-poll check) visited 64 x 64 partition rows.
SELECT wanted.ord, q.id AS queue_id, q.config, p.id, p.idx, p.name, p.next_offset, p.log_start_offset,
       CASE WHEN p.id IS NULL THEN (SELECT count(*)::int FROM partitions c WHERE c.queue_id = q.id) END AS partition_count,
       -- The last stable offset: where the earliest open Kafka transaction begins.
       (SELECT min(t.first_offset) FROM transaction_partitions t WHERE t.partition_id = p.id AND t.first_offset IS NOT NULL) AS open_txn_offset
FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS wanted (queue_name, idx, ord)
LEFT JOIN queues q ON q.name = wanted.queue_name
LEFT JOIN partitions p ON p.queue_id = q.id AND p.idx = wanted.idx
ORDER BY wanted.ord;

-- name: partition-sizes
-- Bytes each partition's batches hold (DescribeLogDirs), by (queue, index);
-- a missing queue or partition comes back as nulls in its row.
SELECT wanted.ord, q.id AS queue_id, p.id,
       (SELECT coalesce(sum(b.size), 0)::bigint FROM batches b WHERE b.partition_id = p.id) AS bytes
FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS wanted (queue_name, idx, ord)
LEFT JOIN queues q ON q.name = wanted.queue_name
LEFT JOIN partitions p ON p.queue_id = q.id AND p.idx = wanted.idx
ORDER BY wanted.ord;

-- name: producer-windows
SELECT w.partition_id, w.producer_id, w.producer_epoch, w.retained, w.last_timestamp
FROM unnest($1::bigint[], $2::bigint[]) AS wanted (partition_id, producer_id)
JOIN producer_windows w ON w.partition_id = wanted.partition_id AND w.producer_id = wanted.producer_id;

-- name: partition-producers
SELECT producer_id, producer_epoch, retained, last_timestamp
FROM producer_windows WHERE partition_id = $1 ORDER BY producer_id;

-- name: append-ledger
SELECT request_id, result FROM append_ledger WHERE request_id = ANY($1::text[]);

-- name: append-write
-- Everything an append (or a native push) writes, in one statement: batches,
-- partition offsets, producer windows, ledger entries and dedup rows, and the
-- notification other processes' long-polls wait for (delivered at commit).
--
-- The batches' bytes arrive as one binary parameter ($7, back to back, sizes
-- in $6): a bytea[] would travel as hex text, twice the size and parsed on
-- both sides.
WITH stored AS (
  INSERT INTO batches (partition_id, base_offset, next_offset, max_timestamp, appended_at, size, bytes)
  SELECT partition_id, base_offset, next_offset, max_timestamp, appended_at, size,
         substring($7::bytea FROM (sum(size) OVER (ORDER BY ord) - size + 1)::int FOR size)
  FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::int[])
       WITH ORDINALITY AS b (partition_id, base_offset, next_offset, max_timestamp, appended_at, size, ord)
), advanced AS (
  UPDATE partitions p SET next_offset = a.next_offset
  FROM unnest($8::bigint[], $9::bigint[]) AS a (id, next_offset)
  WHERE p.id = a.id
), windows AS (
  INSERT INTO producer_windows (partition_id, producer_id, producer_epoch, retained, last_timestamp)
  SELECT partition_id, producer_id, producer_epoch, retained::jsonb, last_timestamp
  FROM unnest($10::bigint[], $11::bigint[], $12::int[], $13::text[], $14::bigint[])
       AS w (partition_id, producer_id, producer_epoch, retained, last_timestamp)
  ON CONFLICT (partition_id, producer_id) DO UPDATE
    SET producer_epoch = excluded.producer_epoch, retained = excluded.retained, last_timestamp = excluded.last_timestamp
), ledger AS (
  INSERT INTO append_ledger (request_id, result, created_at)
  SELECT request_id, result::jsonb, created_at FROM unnest($15::text[], $16::text[], $17::bigint[]) AS l (request_id, result, created_at)
), dedup AS (
  -- An entry outside its window may still be there (the reaper is lazy): the new message takes its place.
  INSERT INTO dedup_index (partition_id, id_hash, transaction_id, message_id, message_offset, stored_at)
  SELECT * FROM unnest($18::bigint[], $19::bytea[], $20::text[], $21::text[], $22::bigint[], $23::bigint[])
  ON CONFLICT (partition_id, id_hash) DO UPDATE
    SET transaction_id = excluded.transaction_id, message_id = excluded.message_id,
        message_offset = excluded.message_offset, stored_at = excluded.stored_at
)
SELECT pg_notify($24, $25) WHERE $24 <> '';

-- name: read-batches
-- A Fetch's batches, every partition in one statement, answered as binary
-- COPY (../binary-copy.ts: the bytes arrive as stored, not as hex text), so
-- its integer arrays are written into the text: ids ($1), fetch offsets
-- ($2), the offsets readable below ($3) and each partition's byte budget
-- ($4). Per partition: batches from the one holding the fetch offset while
-- they fit the budget, and the first one whatever its size; the answer's
-- whole limit is applied by the caller (log.ts), in partition order.
COPY (
  SELECT w.ord, b.base_offset, b.bytes
  FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[])
       WITH ORDINALITY AS w (partition_id, fetch_offset, readable, budget, ord)
  CROSS JOIN LATERAL (
    SELECT base_offset, size, bytes, sum(size) OVER (ORDER BY base_offset) - size AS bytes_before
    FROM batches
    WHERE partition_id = w.partition_id AND next_offset > w.fetch_offset AND base_offset < w.readable
      -- From the batch holding the fetch offset: without this bound the scan
      -- starts at the log's first batch and filters its way to the offset.
      AND base_offset >= coalesce((SELECT max(s.base_offset) FROM batches s WHERE s.partition_id = w.partition_id AND s.base_offset <= w.fetch_offset), w.fetch_offset)
    ORDER BY base_offset
    LIMIT 5000
  ) b
  WHERE b.bytes_before = 0 OR b.bytes_before + b.size <= w.budget
  ORDER BY w.ord, b.base_offset
) TO STDOUT (FORMAT binary);

-- name: native-batches
-- Batches for a native reader from `position`, a bounded number at a time.
SELECT base_offset, next_offset, bytes FROM batches
WHERE partition_id = $1 AND next_offset > $2
ORDER BY base_offset
LIMIT $3;

-- name: max-timestamp-batch
SELECT next_offset, max_timestamp, bytes FROM batches
WHERE partition_id = $1
ORDER BY max_timestamp DESC, base_offset
LIMIT 1;

-- name: batch-at-timestamp
SELECT base_offset, next_offset, max_timestamp, bytes FROM batches
WHERE partition_id = $1 AND next_offset > $2 AND base_offset < $3 AND max_timestamp >= $4
ORDER BY base_offset
LIMIT 1;

-- name: lock-partition
SELECT id, next_offset, log_start_offset FROM partitions WHERE id = $1 FOR UPDATE;

-- name: truncate-log
-- Moves the log start forward; whole batches below it go.
WITH moved AS (
  UPDATE partitions SET log_start_offset = $2 WHERE id = $1 AND log_start_offset < $2
)
DELETE FROM batches WHERE partition_id = $1 AND next_offset <= $2;
