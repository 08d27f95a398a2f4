import { ASSIGNORS } from './assignors.js';
import { compileSubscription } from './subscriptions.js';
import { JOIN_EPOCH, STATIC_LEAVE_EPOCH, type ConsumerGroupError, type ConsumerGroupHeartbeatRequest } from './types.js';

/**
 * Kafka's checks of a ConsumerGroupHeartbeat before the group is looked at,
 * with its sentences: INVALID_REQUEST for a request no member could send,
 * INVALID_REGULAR_EXPRESSION and UNSUPPORTED_ASSIGNOR for a subscription or
 * assignor this coordinator cannot serve. Null when the request may proceed.
 */
export function checkHeartbeat(req: ConsumerGroupHeartbeatRequest): { error: ConsumerGroupError; message: string } | null {
  const invalid = (message: string) => ({ error: 'invalid_request' as const, message });
  if (req.group === '') return invalid("GroupId can't be empty.");
  if (req.instanceId === '') return invalid("InstanceId can't be empty.");
  if (req.rackId === '') return invalid("RackId can't be empty.");
  if (req.memberId === '' && (req.apiVersion >= 1 || req.memberEpoch !== JOIN_EPOCH)) return invalid("MemberId can't be empty.");
  if (req.memberEpoch === JOIN_EPOCH) {
    if (req.rebalanceTimeoutMs === -1) return invalid('RebalanceTimeoutMs must be provided in first request.');
    if (req.topicPartitions === null || req.topicPartitions.length > 0) return invalid('TopicPartitions must be empty when (re-)joining.');
    if (req.subscribedTopicNames === null && req.subscribedTopicRegex === null) {
      return invalid('Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.');
    }
  } else if (req.memberEpoch === STATIC_LEAVE_EPOCH) {
    if (req.instanceId === null) return invalid("InstanceId can't be null.");
  } else if (req.memberEpoch < STATIC_LEAVE_EPOCH) {
    return invalid('MemberEpoch is invalid.');
  }
  if (req.subscribedTopicRegex !== null && req.subscribedTopicRegex !== '') {
    const compiled = compileSubscription(req.subscribedTopicRegex);
    if (typeof compiled === 'string') return { error: 'invalid_regular_expression', message: compiled };
  }
  if (req.serverAssignor !== null && !ASSIGNORS.has(req.serverAssignor)) {
    return { error: 'unsupported_assignor', message: `ServerAssignor ${req.serverAssignor} is not supported. Supported assignors: ${[...ASSIGNORS.keys()].join(', ')}.` };
  }
  return null;
}
