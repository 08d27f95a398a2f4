// ListPartitionReassignments: lists the partition moves in progress.
//
// Choices:
// - A move is never in progress here: the only target that can be met is
//   where a partition already is (./alter-partition-reassignments.ts), and
//   that completes at once. So the answer lists no topics, for every topic
//   asked about or for all (Topics null), as Kafka answers when nothing
//   moves.
//
// Versions: 0 only (flexible).
import { ListPartitionReassignments } from '../../../protocol/messages/index.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';

export const listPartitionReassignments: ApiHandler = {
  api: ListPartitionReassignments,
  versions: '0',
  async handle() {
    return { throttleTimeMs: 0, errorCode: NONE, errorMessage: null, topics: [] };
  },
};
