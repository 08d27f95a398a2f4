-- Share groups (issue 31): each share-partition's state gets a version that
-- every store replaces from one sequence (so a state deleted and made again
-- never repeats a version). A core loads states without a lock, decides, and
-- stores only where the version is still the one it loaded: one statement
-- per ShareFetch instead of a locked transaction per partition and step.
CREATE SEQUENCE share_partition_versions;
ALTER TABLE share_partitions ADD COLUMN version bigint NOT NULL DEFAULT nextval('share_partition_versions');
