// Fetch (API key 1): Reads record batches from topic partitions, long-polling until enough bytes arrive.
import { field as f, type ApiDef } from '../schema/definition.js';

export const Fetch = {
  apiKey: 1,
  name: 'Fetch',
  request: {
    apiKey: 1,
    kind: 'request',
    name: 'FetchRequest',
    validVersions: '0-17',
    flexibleVersions: '12+',
    fields: [
      f('ClusterId', 'string', '12+', { nullableVersions: '12+', default: null, ignorable: true, tag: 0, taggedVersions: '12+' }),
      f('ReplicaId', 'int32', '0-14', { default: -1 }),
      f('ReplicaState', 'ReplicaState', '15+', { tag: 1, taggedVersions: '15+' }, [
        f('ReplicaId', 'int32', '15+', { default: -1 }),
        f('ReplicaEpoch', 'int64', '15+', { default: -1n }),
      ]),
      f('MaxWaitMs', 'int32', '0+'),
      f('MinBytes', 'int32', '0+'),
      f('MaxBytes', 'int32', '3+', { default: 2147483647, ignorable: true }),
      f('IsolationLevel', 'int8', '4+', { default: 0, ignorable: true }),
      f('SessionId', 'int32', '7+', { default: 0, ignorable: true }),
      f('SessionEpoch', 'int32', '7+', { default: -1, ignorable: true }),
      f('Topics', '[]FetchTopic', '0+', {}, [
        f('Topic', 'string', '0-12', { ignorable: true }),
        f('TopicId', 'uuid', '13+', { ignorable: true }),
        f('Partitions', '[]FetchPartition', '0+', {}, [
          f('Partition', 'int32', '0+'),
          f('CurrentLeaderEpoch', 'int32', '9+', { default: -1, ignorable: true }),
          f('FetchOffset', 'int64', '0+'),
          f('LastFetchedEpoch', 'int32', '12+', { default: -1 }),
          f('LogStartOffset', 'int64', '5+', { default: -1n, ignorable: true }),
          f('PartitionMaxBytes', 'int32', '0+'),
          f('ReplicaDirectoryId', 'uuid', '17+', { ignorable: true, tag: 0, taggedVersions: '17+' }),
        ]),
      ]),
      f('ForgottenTopicsData', '[]ForgottenTopic', '7+', {}, [
        f('Topic', 'string', '7-12', { ignorable: true }),
        f('TopicId', 'uuid', '13+', { ignorable: true }),
        f('Partitions', '[]int32', '7+'),
      ]),
      f('RackId', 'string', '11+', { default: "", ignorable: true }),
    ],
  },
  response: {
    apiKey: 1,
    kind: 'response',
    name: 'FetchResponse',
    validVersions: '0-17',
    flexibleVersions: '12+',
    fields: [
      f('ThrottleTimeMs', 'int32', '1+', { ignorable: true }),
      f('ErrorCode', 'int16', '7+', { ignorable: true }),
      f('SessionId', 'int32', '7+', { default: 0 }),
      f('Responses', '[]FetchableTopicResponse', '0+', {}, [
        f('Topic', 'string', '0-12', { ignorable: true }),
        f('TopicId', 'uuid', '13+', { ignorable: true }),
        f('Partitions', '[]PartitionData', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('ErrorCode', 'int16', '0+'),
          f('HighWatermark', 'int64', '0+'),
          f('LastStableOffset', 'int64', '4+', { default: -1n, ignorable: true }),
          f('LogStartOffset', 'int64', '5+', { default: -1n, ignorable: true }),
          f('DivergingEpoch', 'EpochEndOffset', '12+', { tag: 0, taggedVersions: '12+' }, [
            f('Epoch', 'int32', '12+', { default: -1 }),
            f('EndOffset', 'int64', '12+', { default: -1n }),
          ]),
          f('CurrentLeader', 'LeaderIdAndEpoch', '12+', { tag: 1, taggedVersions: '12+' }, [
            f('LeaderId', 'int32', '12+', { default: -1 }),
            f('LeaderEpoch', 'int32', '12+', { default: -1 }),
          ]),
          f('SnapshotId', 'SnapshotId', '12+', { tag: 2, taggedVersions: '12+' }, [
            f('EndOffset', 'int64', '0+', { default: -1n }),
            f('Epoch', 'int32', '0+', { default: -1 }),
          ]),
          f('AbortedTransactions', '[]AbortedTransaction', '4+', { nullableVersions: '4+', ignorable: true }, [
            f('ProducerId', 'int64', '4+'),
            f('FirstOffset', 'int64', '4+'),
          ]),
          f('PreferredReadReplica', 'int32', '11+', { default: -1 }),
          f('Records', 'records', '0+', { nullableVersions: '0+' }),
        ]),
      ]),
      f('NodeEndpoints', '[]NodeEndpoint', '16+', { tag: 0, taggedVersions: '16+' }, [
        f('NodeId', 'int32', '16+', { mapKey: true }),
        f('Host', 'string', '16+'),
        f('Port', 'int32', '16+'),
        f('Rack', 'string', '16+', { nullableVersions: '16+', default: null }),
      ]),
    ],
  },
} satisfies ApiDef;
