// DeleteTopics: deletes topics, each with its queue, its records and the
// committed offsets on it.
//
// Choices:
// - A topic that does not exist (or whose name no topic could have) answers
//   UNKNOWN_TOPIC_OR_PARTITION; an unknown id (v6+) answers UNKNOWN_TOPIC_ID.
// - v6+ entries give a name or an id; both at once is INVALID_REQUEST, as in
//   Kafka.
// - Topics are deleted one after another in request order, so a name listed
//   twice is deleted once and its second entry answers unknown.
// - Deletion is done when the answer goes out; there is no pending state.
// - ACLs: DELETE on the topic, else TOPIC_AUTHORIZATION_FAILED whether or not
//   it exists; a topic named by id that the principal may not DESCRIBE
//   answers UNKNOWN_TOPIC_ID, as Kafka's, so ids reveal nothing.
//
// Versions: v0-v5 name topics only (TopicNames); v6 names or ids (Topics)
// and answers the topic id; error messages from v5.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DeleteTopics } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';
import { forgetTopicIds, topicNameProblem, topicNamesById, ZERO_UUID } from '../topics.js';
import { forgetTopic } from '../../metrics/kafka.js';

interface DeletableTopic {
  name: string | null;
  topicId: string;
}

interface DeletedTopic {
  name: string | null;
  topicId: string;
  errorCode: number;
  errorMessage: string | null;
}

async function deleteTopic(ctx: HandlerContext, asked: DeletableTopic, namesById: Map<string, string>): Promise<DeletedTopic> {
  const byId = asked.topicId !== ZERO_UUID;
  if (byId && asked.name !== null) {
    return { ...asked, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Give a topic name or a topic id, not both.' };
  }
  if (!byId && asked.name === null) {
    return { ...asked, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Give a topic name or a topic id.' };
  }
  const name = byId ? namesById.get(asked.topicId) ?? null : asked.name!;
  const unknown: DeletedTopic = byId
    ? { name, topicId: asked.topicId, errorCode: ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: `No topic has id ${asked.topicId}.` }
    : { name, topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Topic '${name}' does not exist.` };
  if (name === null) return unknown;
  // By id, a topic the principal may not even DESCRIBE stays unknown; by name, the refusal comes before its existence.
  if (byId && !ctx.access.allows('DESCRIBE', 'TOPIC', name)) return { ...unknown, name: null };
  if (!ctx.access.allows('DELETE', 'TOPIC', name)) {
    return { name, topicId: asked.topicId, errorCode: DENIED_CODE.TOPIC, errorMessage: `Not authorized to delete topic '${name}': it needs DELETE on the topic.` };
  }
  if (topicNameProblem(name) !== null) return unknown;
  const queue = await ctx.core.describeQueue({ name });
  // An id learned before a delete and re-create must not reach the new topic.
  if (!queue || (byId && queue.id !== asked.topicId)) return unknown;
  try {
    await ctx.core.deleteQueue({ name });
    forgetTopic(name);
    ctx.log.info({ topic: name, topicId: queue.id }, 'topic deleted');
    return { name, topicId: queue.id, errorCode: NONE, errorMessage: null };
  } catch (e) {
    const { errorCode, errorMessage } = kafkaErrorOf(e);
    return { name, topicId: queue.id, errorCode, errorMessage };
  }
}

export const deleteTopics: ApiHandler<typeof DeleteTopics> = {
  api: DeleteTopics,
  versions: '0-6',
  async handle(request, ctx) {
    const asked: DeletableTopic[] =
      ctx.header.apiVersion >= 6 ? request.topics : request.topicNames.map((name: string) => ({ name, topicId: ZERO_UUID }));
    const ids = asked.filter((t) => t.topicId !== ZERO_UUID).map((t) => t.topicId);
    const namesById = ids.length > 0 ? await topicNamesById(ctx, ids) : new Map<string, string>();

    const responses: DeletedTopic[] = [];
    for (const topic of asked) responses.push(await deleteTopic(ctx, topic, namesById));
    if (responses.some((r) => r.errorCode === NONE)) forgetTopicIds(ctx);
    return { throttleTimeMs: 0, responses };
  },
};
