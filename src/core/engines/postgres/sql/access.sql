-- name: acl-insert
INSERT INTO acl_bindings (resource_type, pattern_type, resource_name, principal, host, operation, permission)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
ON CONFLICT DO NOTHING;

-- name: acl-list
SELECT resource_type, pattern_type, resource_name, principal, host, operation, permission FROM acl_bindings;

-- name: acl-lock
-- DeleteAcls matches its filters against what this lock holds still, so a
-- binding added meanwhile is either seen whole or not at all.
LOCK TABLE acl_bindings IN SHARE ROW EXCLUSIVE MODE;

-- name: acl-delete
DELETE FROM acl_bindings
WHERE (resource_type, pattern_type, resource_name, principal, host, operation, permission) IN (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
);

-- name: quota-lock
LOCK TABLE client_quotas IN SHARE ROW EXCLUSIVE MODE;

-- name: quota-list
SELECT entity_key, entity, quota_values FROM client_quotas;

-- name: quota-upsert
INSERT INTO client_quotas (entity_key, entity, quota_values) VALUES ($1, $2, $3)
ON CONFLICT (entity_key) DO UPDATE SET entity = excluded.entity, quota_values = excluded.quota_values;

-- name: quota-delete
DELETE FROM client_quotas WHERE entity_key = $1;
