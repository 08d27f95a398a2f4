-- Queues gain topicConfigs (QueueConfig): the Kafka topic configs set on a
-- topic. Queues made before it have none set.
UPDATE queues SET config = config || '{"topicConfigs": {}}'::jsonb
WHERE NOT config ? 'topicConfigs';
