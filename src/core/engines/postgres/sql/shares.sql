-- name: share-load
SELECT s.start_offset, s.records, s.version, (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now
FROM jsonb_to_recordset($1::jsonb) AS k(i integer, group_name text, queue text, partition integer)
LEFT JOIN share_partitions s ON s.group_name = k.group_name AND s.queue = k.queue AND s.partition = k.partition
ORDER BY k.i;

-- name: share-store
WITH w AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS w(group_name text, queue text, partition integer, expected bigint, start_offset bigint, records jsonb)
), updated AS (
  UPDATE share_partitions s
  SET start_offset = w.start_offset, records = w.records, version = nextval('share_partition_versions'), updated_at = (extract(epoch FROM clock_timestamp()) * 1000)::bigint
  FROM w
  WHERE w.expected > 0 AND w.start_offset IS NOT NULL AND s.group_name = w.group_name AND s.queue = w.queue AND s.partition = w.partition AND s.version = w.expected
  RETURNING s.group_name, s.queue, s.partition
), deleted AS (
  DELETE FROM share_partitions s USING w
  WHERE w.expected > 0 AND w.start_offset IS NULL AND s.group_name = w.group_name AND s.queue = w.queue AND s.partition = w.partition AND s.version = w.expected
  RETURNING s.group_name, s.queue, s.partition
), inserted AS (
  INSERT INTO share_partitions (group_name, queue, partition, start_offset, records, updated_at)
  SELECT w.group_name, w.queue, w.partition, w.start_offset, w.records, (extract(epoch FROM clock_timestamp()) * 1000)::bigint FROM w
  WHERE w.expected = 0 AND w.start_offset IS NOT NULL
  ON CONFLICT (group_name, queue, partition) DO NOTHING
  RETURNING group_name, queue, partition
)
SELECT * FROM updated UNION ALL SELECT * FROM deleted UNION ALL SELECT * FROM inserted;

-- name: share-list
SELECT group_name, queue, partition, start_offset, records FROM share_partitions
WHERE $1::text IS NULL OR group_name = $1 ORDER BY group_name, queue, partition;
