-- name: share-hold
SELECT pg_advisory_xact_lock(hashtextextended($1, 932)) AS held, (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now;

-- name: share-get
SELECT start_offset, records FROM share_partitions WHERE group_name = $1 AND queue = $2 AND partition = $3;

-- name: share-put
INSERT INTO share_partitions (group_name, queue, partition, start_offset, records, updated_at) VALUES ($1, $2, $3, $4, $5::jsonb, $6)
ON CONFLICT (group_name, queue, partition) DO UPDATE
  SET start_offset = excluded.start_offset, records = excluded.records, updated_at = excluded.updated_at;

-- name: share-delete
DELETE FROM share_partitions WHERE group_name = $1 AND queue = $2 AND partition = $3;

-- name: share-list
SELECT group_name, queue, partition, start_offset, records FROM share_partitions
WHERE $1::text IS NULL OR group_name = $1 ORDER BY group_name, queue, partition;
