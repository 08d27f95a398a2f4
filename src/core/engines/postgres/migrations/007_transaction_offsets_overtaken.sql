-- A pending transactional offset that a plain OffsetCommit of the same group
-- and partition came after: Kafka keeps the most recently written offset, so
-- the transaction's commit leaves the plain one in place.
ALTER TABLE transaction_offsets ADD COLUMN overtaken boolean NOT NULL DEFAULT false;
