import { JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH } from '../consumer/types.js';
import type { StreamsGroupError, StreamsGroupHeartbeatRequest, Topology } from './types.js';

/**
 * Kafka's checks of a StreamsGroupHeartbeat before the group is looked at,
 * with its sentences (INVALID_REQUEST), and of a joining member's topology
 * (STREAMS_INVALID_TOPOLOGY). Null when the request may proceed.
 */
export function checkStreamsHeartbeat(req: StreamsGroupHeartbeatRequest): { error: StreamsGroupError; message: string } | null {
  const invalid = (message: string) => ({ error: 'invalid_request' as const, message });
  if (req.group === '') return invalid("GroupId can't be empty.");
  if (req.memberId === '') return invalid("MemberId can't be empty.");
  if (req.instanceId === '') return invalid("InstanceId can't be empty.");
  if (req.rackId === '') return invalid("RackId can't be empty.");
  const given = [req.activeTasks, req.standbyTasks, req.warmupTasks].filter((t) => t !== null).length;
  if (given !== 0 && given !== 3) return invalid('If one task-type is non-null, all must be non-null.');
  if (req.memberEpoch === JOIN_EPOCH) {
    if (req.rebalanceTimeoutMs === -1) return invalid('RebalanceTimeoutMs must be provided in first request.');
    if (req.topology === null) return invalid('Topology must be non-null when (re-)joining.');
    if (req.activeTasks === null || req.activeTasks.length > 0) return invalid('ActiveTasks must be empty when (re-)joining.');
    if (req.standbyTasks === null || req.standbyTasks.length > 0) return invalid('StandbyTasks must be empty when (re-)joining.');
    if (req.warmupTasks === null || req.warmupTasks.length > 0) return invalid('WarmupTasks must be empty when (re-)joining.');
    if (req.processId === null || req.processId === '') return invalid('ProcessId must be provided when (re-)joining.');
    return checkTopology(req.topology);
  }
  if (req.memberEpoch === STATIC_LEAVE_EPOCH) {
    if (req.instanceId === null) return invalid("InstanceId can't be null.");
  } else if (req.memberEpoch < STATIC_LEAVE_EPOCH) {
    return invalid('MemberEpoch is invalid.');
  } else if (req.memberEpoch !== LEAVE_EPOCH && req.topology !== null) {
    return invalid('Topology can only be provided when (re-)joining.');
  }
  return null;
}

/** A topology no application could run: subtopologies named twice, copartition indexes out of range. */
function checkTopology(topology: Topology): { error: StreamsGroupError; message: string } | null {
  const invalid = (message: string) => ({ error: 'streams_invalid_topology' as const, message });
  const ids = new Set<string>();
  for (const s of topology.subtopologies) {
    if (ids.has(s.subtopologyId)) return invalid(`Subtopology ${s.subtopologyId} is defined twice.`);
    ids.add(s.subtopologyId);
    for (const g of s.copartitionGroups) {
      const outside = (indexes: number[], length: number) => indexes.some((i) => i < 0 || i >= length);
      if (outside(g.sourceTopics, s.sourceTopics.length) || outside(g.sourceTopicRegex, s.sourceTopicRegex.length) || outside(g.repartitionSourceTopics, s.repartitionSourceTopics.length)) {
        return invalid(`Copartition group of subtopology ${s.subtopologyId} refers to a topic it does not have.`);
      }
    }
  }
  return null;
}
