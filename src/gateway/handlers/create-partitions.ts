// CreatePartitions: raises topics' partition counts. New partitions get the
// next indexes ("N".."M-1") and start empty.
//
// Choices:
// - The count only grows: a count at or below the current one answers
//   INVALID_PARTITIONS saying how many partitions the topic has.
// - Manual assignments are taken when there is one per new partition and
//   each names this gateway's node id alone (../replica-assignments.ts), the
//   one replica every partition lists; otherwise INVALID_REPLICA_ASSIGNMENT,
//   as Kafka answers assignments its registered brokers cannot meet.
// - A topic named twice in one request answers INVALID_REQUEST for each entry.
// - ValidateOnly checks everything and changes nothing.
//
// Versions: 0-3 differ only in encoding (flexible from v2).
//
// ACLs: ALTER on the topic, else TOPIC_AUTHORIZATION_FAILED (before its existence is looked at).
import { ErrorCode } from '../../../protocol/error-codes.js';
import { CreatePartitions } from '../../../protocol/messages/index.js';
import type { RequestOf } from '../../../protocol/codec/types.js';
import { MAX_PARTITIONS } from '../../core/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';
import { listedBrokers } from '../brokers.js';
import { replicaListProblem } from '../replica-assignments.js';
import { repeatedNames, topicNameProblem } from '../topics.js';

type PartitionsRequest = RequestOf<typeof CreatePartitions>['topics'][number];

interface PartitionsResult {
  name: string;
  errorCode: number;
  errorMessage: string | null;
}

async function growTopic(ctx: HandlerContext, topic: PartitionsRequest, duplicated: boolean, validateOnly: boolean): Promise<PartitionsResult> {
  const refuse = (errorCode: number, errorMessage: string): PartitionsResult => ({ name: topic.name, errorCode, errorMessage });
  if (duplicated) return refuse(ErrorCode.INVALID_REQUEST, `Topic '${topic.name}' appears more than once in this request; name each topic once.`);
  if (!ctx.access.allows('ALTER', 'TOPIC', topic.name)) return refuse(DENIED_CODE.TOPIC, `Not authorized to add partitions to topic '${topic.name}': it needs ALTER on the topic.`);
  const queue = topicNameProblem(topic.name) === null ? await ctx.core.describeQueue({ name: topic.name }) : null;
  if (!queue) return refuse(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${topic.name}' does not exist.`);
  const current = queue.partitions.length;
  if (topic.count <= current) {
    return refuse(
      ErrorCode.INVALID_PARTITIONS,
      topic.count === current
        ? `Topic '${topic.name}' already has ${current} partitions; ask for more than ${current} to add some.`
        : `Topic '${topic.name}' has ${current} partitions, more than the ${topic.count} asked for; partitions can be added but not removed.`,
    );
  }
  if (topic.count > MAX_PARTITIONS) {
    return refuse(ErrorCode.INVALID_PARTITIONS, `A topic can have at most ${MAX_PARTITIONS} partitions; ${topic.count} were asked for.`);
  }
  if (topic.assignments !== null) {
    const added = topic.count - current;
    if (topic.assignments.length !== added) {
      return refuse(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Attempted to add ${added} additional partition(s), but ${topic.assignments.length} assignment(s) were given; give one replica list per new partition.`);
    }
    for (const { brokerIds } of topic.assignments) {
      const problem = replicaListProblem(brokerIds, listedBrokers(ctx).map((b) => b.nodeId));
      if (problem) return refuse(ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem);
    }
  }
  if (validateOnly) return { name: topic.name, errorCode: NONE, errorMessage: null };
  try {
    await ctx.core.addPartitions({ name: topic.name, totalCount: topic.count });
    ctx.log.info({ topic: topic.name, from: current, to: topic.count }, 'partitions added');
    return { name: topic.name, errorCode: NONE, errorMessage: null };
  } catch (e) {
    const { errorCode, errorMessage } = kafkaErrorOf(e);
    return refuse(errorCode, errorMessage);
  }
}

export const createPartitions: ApiHandler<typeof CreatePartitions> = {
  api: CreatePartitions,
  versions: '0-3',
  async handle(request, ctx) {
    const asked: PartitionsRequest[] = request.topics;
    const repeated = repeatedNames(asked.map((t) => t.name));
    const results = await Promise.all(asked.map((t) => growTopic(ctx, t, repeated.has(t.name), request.validateOnly)));
    return { throttleTimeMs: 0, results };
  },
};
