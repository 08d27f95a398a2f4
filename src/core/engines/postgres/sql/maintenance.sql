-- name: try-lock-maintenance
-- One process reaps at a time; the others skip the round. Advisory locks are
-- the database's, so the key names the schema: deployments (and test schemas)
-- sharing one database do not skip each other's rounds.
SELECT pg_try_advisory_xact_lock(4, hashtext(current_schema())) AS locked;

-- name: retention-partitions
-- Partitions retention may shorten. By time alone only when the oldest batch
-- is past retention: retention removes an oldest-first run, so a young oldest
-- batch means nothing goes, and most partitions are skipped without reading
-- their batch list.
SELECT p.id, p.log_start_offset, q.config
FROM partitions p JOIN queues q ON q.id = p.queue_id
WHERE (q.config ->> 'retentionBytes')::bigint >= 0
   OR ((q.config ->> 'retentionMs')::bigint >= 0
       AND (SELECT b.appended_at FROM batches b WHERE b.partition_id = p.id ORDER BY b.base_offset LIMIT 1)
           < $1 - (q.config ->> 'retentionMs')::bigint);

-- name: partition-batch-sizes
SELECT base_offset, next_offset, size, appended_at FROM batches WHERE partition_id = $1 ORDER BY base_offset;

-- name: expire-dedup
-- Entries outside their queue's window answer no more; a window of 0 keeps none.
DELETE FROM dedup_index d
USING partitions p, queues q
WHERE d.partition_id = p.id AND p.queue_id = q.id
  AND d.stored_at <= $1 - (q.config ->> 'dedupWindowSeconds')::bigint * 1000;

-- name: expire-kv
DELETE FROM kv WHERE expires_at IS NOT NULL AND expires_at <= $1;

-- name: trim-append-ledger
-- Keeps the newest $1 entries: a retry comes within seconds, not after thousands of calls.
DELETE FROM append_ledger
WHERE created_at < (SELECT created_at FROM append_ledger ORDER BY created_at DESC OFFSET $1 LIMIT 1);
