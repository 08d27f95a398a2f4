-- name: scram-list-users
SELECT user_name, mechanism, iterations FROM scram_credentials ORDER BY user_name COLLATE "C", mechanism;

-- name: scram-describe-users
SELECT user_name, mechanism, iterations FROM scram_credentials WHERE user_name = ANY($1::text[]) ORDER BY mechanism;

-- name: scram-get
SELECT iterations, salt, stored_key, server_key FROM scram_credentials WHERE user_name = $1 AND mechanism = $2;

-- name: scram-delete
DELETE FROM scram_credentials WHERE user_name = $1 AND mechanism = $2 RETURNING 1 AS deleted;

-- name: scram-upsert
INSERT INTO scram_credentials (user_name, mechanism, iterations, salt, stored_key, server_key) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (user_name, mechanism) DO UPDATE
  SET iterations = excluded.iterations, salt = excluded.salt, stored_key = excluded.stored_key, server_key = excluded.server_key;
