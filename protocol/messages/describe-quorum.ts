// DescribeQuorum (API key 55): Describes the KRaft metadata quorum: its leader, voters and observers.
import { field as f, struct, type ApiDef } from '../schema/definition.js';

export const DescribeQuorum = {
  apiKey: 55,
  name: 'DescribeQuorum',
  request: {
    apiKey: 55,
    kind: 'request',
    name: 'DescribeQuorumRequest',
    validVersions: '0-2',
    flexibleVersions: '0+',
    fields: [
      f('Topics', '[]TopicData', '0+', {}, [
        f('TopicName', 'string', '0+'),
        f('Partitions', '[]PartitionData', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
        ]),
      ]),
    ],
  },
  response: {
    apiKey: 55,
    kind: 'response',
    name: 'DescribeQuorumResponse',
    validVersions: '0-2',
    flexibleVersions: '0+',
    fields: [
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '2+', { nullableVersions: '2+', ignorable: true }),
      f('Topics', '[]TopicData', '0+', {}, [
        f('TopicName', 'string', '0+'),
        f('Partitions', '[]PartitionData', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('ErrorCode', 'int16', '0+'),
          f('ErrorMessage', 'string', '2+', { nullableVersions: '2+', ignorable: true }),
          f('LeaderId', 'int32', '0+'),
          f('LeaderEpoch', 'int32', '0+'),
          f('HighWatermark', 'int64', '0+'),
          f('CurrentVoters', '[]ReplicaState', '0+'),
          f('Observers', '[]ReplicaState', '0+'),
        ]),
      ]),
      f('Nodes', '[]Node', '2+', {}, [
        f('NodeId', 'int32', '2+', { mapKey: true }),
        f('Listeners', '[]Listener', '2+', {}, [
          f('Name', 'string', '2+', { mapKey: true }),
          f('Host', 'string', '2+'),
          f('Port', 'uint16', '2+'),
        ]),
      ]),
    ],
    commonStructs: [
      struct('ReplicaState', '0+', [
        f('ReplicaId', 'int32', '0+'),
        f('ReplicaDirectoryId', 'uuid', '2+'),
        f('LogEndOffset', 'int64', '0+'),
        f('LastFetchTimestamp', 'int64', '1+', { ignorable: true, default: -1 }),
        f('LastCaughtUpTimestamp', 'int64', '1+', { ignorable: true, default: -1 }),
      ]),
    ],
  },
} satisfies ApiDef;
