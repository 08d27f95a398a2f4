-- Queues gain topicConfigs (the Kafka topic configs set on a topic) and
-- Kafka's timestamp rules (QueueConfig). Queues made before have no topic
-- configs set and Kafka 4's default rules: no limit before the time of
-- append, one hour after it (9007199254740991 is the largest safe integer).
UPDATE queues SET config = '{"topicConfigs": {}, "timestampBeforeMaxMs": 9007199254740991, "timestampAfterMaxMs": 3600000}'::jsonb || config
WHERE NOT config ? 'topicConfigs';
