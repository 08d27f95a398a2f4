-- name: lock-kv-slot
-- Serializes writers of one key even while the key is absent (a row lock
-- would have no row to hold).
SELECT pg_advisory_xact_lock(1, hashtext($1 || ':' || $2));

-- Values are read as JSON text: the driver's jsonb parser would round an
-- integer past 2^53, and counters must stay exact.

-- name: kv-get
SELECT ns, key, value::text AS value, version, expires_at FROM kv WHERE ns = $1 AND key = $2;

-- name: kv-get-many
SELECT wanted.ord, kv.ns, kv.key, kv.value::text AS value, kv.version, kv.expires_at
FROM unnest($2::text[]) WITH ORDINALITY AS wanted (key, ord)
LEFT JOIN kv ON kv.ns = $1 AND kv.key = wanted.key
ORDER BY wanted.ord;

-- name: kv-get-prefix
SELECT ns, key, value::text AS value, version, expires_at FROM kv
WHERE ns = $1 AND left(key, length($2)) = $2 AND (expires_at IS NULL OR expires_at > $3)
ORDER BY key COLLATE "C"
LIMIT $4;

-- name: kv-upsert
INSERT INTO kv (ns, key, value, version, expires_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (ns, key) DO UPDATE
  SET value = excluded.value, version = excluded.version, expires_at = excluded.expires_at;

-- name: kv-delete
DELETE FROM kv WHERE ns = $1 AND key = $2;
