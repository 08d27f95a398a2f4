-- A Kafka Streams group's state (KIP-1071) as its coordinator last stored it:
-- group and assignment epochs, the topology, the target assignment, and each
-- member's process, endpoint, epochs and tasks. A coordinator that takes the
-- group over (another core, or a restart) loads it, so members carry on at
-- their epochs, as Kafka's reloads the group from __consumer_offsets.
CREATE TABLE streams_group_states (
  group_name text PRIMARY KEY,
  state jsonb NOT NULL,
  stored_at bigint NOT NULL
);
