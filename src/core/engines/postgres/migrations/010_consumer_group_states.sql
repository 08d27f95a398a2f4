-- A KIP-848 consumer group's state as its coordinator last stored it: group
-- and assignment epochs, the assignor, the target assignment, and each
-- member's subscription, epochs and assignment. A coordinator that takes the
-- group over (another core, or a restart) loads it, so members carry on at
-- their epochs, as Kafka's reloads the group from __consumer_offsets.
CREATE TABLE consumer_group_states (
  group_name text PRIMARY KEY,
  state jsonb NOT NULL,
  stored_at bigint NOT NULL
);
