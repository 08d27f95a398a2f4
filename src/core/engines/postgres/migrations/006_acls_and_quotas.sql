-- Numbered 191 (issue 19, authorization): clear of the numbers other branches of this round took (003, 004, 019, 020).
-- ACL bindings and client quotas (src/core/core.ts): shared by every gateway
-- in front of this database, so all of them authorize and throttle alike.
CREATE TABLE acl_bindings (
  resource_type text NOT NULL,
  pattern_type text NOT NULL,
  resource_name text NOT NULL,
  principal text NOT NULL,
  host text NOT NULL,
  operation text NOT NULL,
  permission text NOT NULL,
  PRIMARY KEY (resource_type, pattern_type, resource_name, principal, host, operation, permission)
);

-- One row per quota entity; entity_key is rules/quotas.ts's quotaEntityKey.
CREATE TABLE client_quotas (
  entity_key text PRIMARY KEY,
  entity jsonb NOT NULL,
  quota_values jsonb NOT NULL
);
