-- name: try-lock-compaction
-- One compactor works on a partition at a time, across every core on the
-- database; a session lock, held for the partition's whole pass (several
-- transactions), released by unlock-compaction. The key names the schema with
-- the partition: another schema on the same database has its own partition ids.
SELECT pg_try_advisory_lock(6, hashtext(current_schema() || ':' || $1::text)) AS locked;

-- name: unlock-compaction
SELECT pg_advisory_unlock(6, hashtext(current_schema() || ':' || $1::text));

-- name: compacted-partitions
-- The partitions of compacted queues, with their compaction settings and checkpoint.
SELECT p.id, p.next_offset, p.log_start_offset, q.config -> 'compaction' AS settings, coalesce(c.cleaned_to, 0) AS cleaned_to, c.tombstone_horizon
FROM partitions p
JOIN queues q ON q.id = p.queue_id
LEFT JOIN compaction_progress c ON c.partition_id = p.id
WHERE jsonb_typeof(q.config -> 'compaction') = 'object'
ORDER BY p.id;

-- name: compaction-batches
-- Stored batches in [$2, $3), oldest first, a bounded number at a time.
SELECT base_offset, bytes FROM batches
WHERE partition_id = $1 AND base_offset >= $2 AND base_offset < $3
ORDER BY base_offset
LIMIT $4;

-- name: compaction-write
-- One page of a pass, in one transaction: rewritten batches take their new
-- bytes (back to back in $3, sizes in $4, as in append-write), emptied ones go,
-- and the checkpoint moves when the pass is done ($7, else -1) with the
-- earliest delete horizon of the tombstones the pass kept ($8). A batch that
-- retention removed meanwhile matches no row and stays removed.
WITH rewritten AS (
  UPDATE batches b SET bytes = r.bytes, size = r.size, max_timestamp = r.max_timestamp
  FROM (
    SELECT base_offset, size, max_timestamp,
           substring($3::bytea FROM (sum(size) OVER (ORDER BY ord) - size + 1)::int FOR size) AS bytes
    FROM unnest($2::bigint[], $4::int[], $5::bigint[]) WITH ORDINALITY AS u (base_offset, size, max_timestamp, ord)
  ) r
  WHERE b.partition_id = $1 AND b.base_offset = r.base_offset
), dropped AS (
  DELETE FROM batches WHERE partition_id = $1 AND base_offset = ANY($6::bigint[])
)
INSERT INTO compaction_progress (partition_id, cleaned_to, tombstone_horizon)
SELECT $1, $7::bigint, $8::bigint WHERE $7::bigint >= 0 AND EXISTS (SELECT 1 FROM partitions WHERE id = $1)
ON CONFLICT (partition_id) DO UPDATE
  SET cleaned_to = greatest(compaction_progress.cleaned_to, excluded.cleaned_to), tombstone_horizon = excluded.tombstone_horizon;

-- name: compaction-open-transaction
-- Where the partition's earliest open Kafka transaction begins (null: none): the compactor stops there.
SELECT min(first_offset) AS first_offset FROM transaction_partitions WHERE partition_id = $1 AND first_offset IS NOT NULL;
