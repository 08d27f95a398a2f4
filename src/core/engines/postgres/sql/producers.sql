-- name: new-producer
INSERT INTO producers (producer_id, producer_epoch)
VALUES (nextval('producer_ids'), 0)
RETURNING producer_id, producer_epoch;

-- name: producer-epoch
SELECT producer_epoch FROM producers WHERE producer_id = $1 FOR UPDATE;

-- name: set-producer-epoch
INSERT INTO producers (producer_id, producer_epoch) VALUES ($1, $2)
ON CONFLICT (producer_id) DO UPDATE SET producer_epoch = excluded.producer_epoch;

-- name: lock-transactional-producer
-- The advisory lock serializes InitProducerId for one transactional id even
-- before its row exists.
SELECT pg_advisory_xact_lock(2, hashtext($1));

-- name: transactional-producer
SELECT producer_id, producer_epoch FROM transactional_producers WHERE transactional_id = $1;

-- name: set-transactional-producer
INSERT INTO transactional_producers (transactional_id, producer_id, producer_epoch, timeout_ms)
VALUES ($1, $2, $3, $4)
ON CONFLICT (transactional_id) DO UPDATE
  SET producer_id = excluded.producer_id, producer_epoch = excluded.producer_epoch, timeout_ms = excluded.timeout_ms;

-- name: copied-producers
-- Producer ids seen in batches the migration bridge copied, each with the
-- highest epoch copied: their producers may bump their epoch here (KIP-360).
INSERT INTO producers (producer_id, producer_epoch)
SELECT * FROM unnest($1::bigint[], $2::integer[])
ON CONFLICT (producer_id) DO UPDATE SET producer_epoch = GREATEST(producers.producer_epoch, excluded.producer_epoch);

-- name: producer-ids-past
-- Ids handed out later stay above every copied producer's id.
SELECT setval('producer_ids', $1::bigint) WHERE $1::bigint > (SELECT last_value FROM producer_ids);
