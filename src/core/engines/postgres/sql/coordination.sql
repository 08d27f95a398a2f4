-- name: lease-take
-- Takes or keeps a coordinator lease: a new lease, one this node already
-- holds (its deadline moves on, its epoch stays), one whose deadline has
-- passed, or one whose owner is not among the nodes the caller knows to be
-- reachable ($6; null when the caller knows nothing of the others). A lease
-- that changes hands gets the next epoch. No row back: another node holds it.
INSERT INTO coordinator_leases AS l (kind, key, owner, epoch, deadline)
VALUES ($1, $2, $3, 1, $4::bigint + $5::bigint)
ON CONFLICT (kind, key) DO UPDATE
  SET owner = excluded.owner,
      epoch = l.epoch + CASE WHEN l.owner = excluded.owner THEN 0 ELSE 1 END,
      deadline = excluded.deadline
  WHERE l.owner = excluded.owner OR l.deadline <= $4::bigint OR coalesce(l.owner <> ALL ($6::text[]), false)
RETURNING owner, epoch, deadline;

-- name: lease-get
SELECT owner, epoch, deadline FROM coordinator_leases WHERE kind = $1 AND key = $2;

-- name: lease-check
-- Inside a write's transaction: the lease as the writer holds it, locked
-- against a takeover until the write commits (a takeover updates the row).
SELECT epoch FROM coordinator_leases WHERE kind = $1 AND key = $2 AND owner = $3 FOR SHARE;

-- name: lease-renew
-- Moves on the deadline of the leases this node still holds at the epochs it
-- knows; what comes back is what it still holds.
UPDATE coordinator_leases l SET deadline = $2
FROM unnest($3::text[], $4::text[], $5::bigint[]) AS held (kind, key, epoch)
WHERE l.owner = $1 AND l.kind = held.kind AND l.key = held.key AND l.epoch = held.epoch
RETURNING l.kind, l.key;

-- name: lease-release
DELETE FROM coordinator_leases WHERE kind = $1 AND key = $2 AND owner = $3 AND epoch = $4;

-- name: lease-release-all
DELETE FROM coordinator_leases WHERE owner = $1;

-- name: group-state-store
INSERT INTO group_states (group_name, state, stored_at) VALUES ($1, $2, $3)
ON CONFLICT (group_name) DO UPDATE SET state = excluded.state, stored_at = excluded.stored_at;

-- name: group-state-load
SELECT state FROM group_states WHERE group_name = $1;

-- name: group-state-delete
DELETE FROM group_states WHERE group_name = $1;

-- name: group-states-all
SELECT group_name, state FROM group_states ORDER BY group_name COLLATE "C";

-- name: consumer-group-state-store
INSERT INTO consumer_group_states (group_name, state, stored_at) VALUES ($1, $2, $3)
ON CONFLICT (group_name) DO UPDATE SET state = excluded.state, stored_at = excluded.stored_at;

-- name: consumer-group-state-load
SELECT state FROM consumer_group_states WHERE group_name = $1;

-- name: consumer-group-state-delete
DELETE FROM consumer_group_states WHERE group_name = $1;

-- name: consumer-group-states-all
SELECT group_name, state FROM consumer_group_states ORDER BY group_name COLLATE "C";

-- name: streams-group-state-store
INSERT INTO streams_group_states (group_name, state, stored_at) VALUES ($1, $2, $3)
ON CONFLICT (group_name) DO UPDATE SET state = excluded.state, stored_at = excluded.stored_at;

-- name: streams-group-state-load
SELECT state FROM streams_group_states WHERE group_name = $1;

-- name: streams-group-state-delete
DELETE FROM streams_group_states WHERE group_name = $1;

-- name: streams-group-states-all
SELECT group_name, state FROM streams_group_states ORDER BY group_name COLLATE "C";
