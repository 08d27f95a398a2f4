// ShareFetch (API key 78): fetch records under acquisition locks for a share group member, acknowledging earlier ones (KIP-932).
import { field as f, type ApiDef } from '../schema/definition.js';

const acknowledgementBatch = [
  f('FirstOffset', 'int64', '0+'),
  f('LastOffset', 'int64', '0+'),
  f('AcknowledgeTypes', '[]int8', '0+'),
] as const;

const leaderAndEpoch = [f('LeaderId', 'int32', '0+'), f('LeaderEpoch', 'int32', '0+')] as const;

export const nodeEndpoint = [
  f('NodeId', 'int32', '0+', { mapKey: true }),
  f('Host', 'string', '0+'),
  f('Port', 'int32', '0+'),
  f('Rack', 'string', '0+', { nullableVersions: '0+', default: null }),
] as const;

export const ShareFetch = {
  apiKey: 78,
  name: 'ShareFetch',
  request: {
    apiKey: 78,
    kind: 'request',
    name: 'ShareFetchRequest',
    validVersions: '1-2',
    flexibleVersions: '0+',
    fields: [
      f('GroupId', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('MemberId', 'string', '0+', { nullableVersions: '0+' }),
      f('ShareSessionEpoch', 'int32', '0+'),
      f('MaxWaitMs', 'int32', '0+'),
      f('MinBytes', 'int32', '0+'),
      f('MaxBytes', 'int32', '0+', { default: 2147483647 }),
      f('MaxRecords', 'int32', '1+'),
      f('BatchSize', 'int32', '1+'),
      f('ShareAcquireMode', 'int8', '2+', { default: 0, ignorable: true }),
      f('IsRenewAck', 'bool', '2+', { default: false }),
      f('Topics', '[]FetchTopic', '0+', {}, [
        f('TopicId', 'uuid', '0+', { mapKey: true }),
        f('Partitions', '[]FetchPartition', '0+', {}, [
          f('PartitionIndex', 'int32', '0+', { mapKey: true }),
          f('PartitionMaxBytes', 'int32', '0'),
          f('AcknowledgementBatches', '[]AcknowledgementBatch', '0+', {}, acknowledgementBatch),
        ]),
      ]),
      f('ForgottenTopicsData', '[]ForgottenTopic', '0+', {}, [
        f('TopicId', 'uuid', '0+'),
        f('Partitions', '[]int32', '0+'),
      ]),
    ],
  },
  response: {
    apiKey: 78,
    kind: 'response',
    name: 'ShareFetchResponse',
    validVersions: '1-2',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('AcquisitionLockTimeoutMs', 'int32', '1+'),
      f('Responses', '[]ShareFetchableTopicResponse', '0+', {}, [
        f('TopicId', 'uuid', '0+', { mapKey: true }),
        f('Partitions', '[]PartitionData', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('ErrorCode', 'int16', '0+'),
          f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
          f('AcknowledgeErrorCode', 'int16', '0+'),
          f('AcknowledgeErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
          f('CurrentLeader', 'LeaderIdAndEpoch', '0+', {}, leaderAndEpoch),
          f('Records', 'records', '0+', { nullableVersions: '0' }),
          f('AcquiredRecords', '[]AcquiredRecords', '0+', {}, [
            f('FirstOffset', 'int64', '0+'),
            f('LastOffset', 'int64', '0+'),
            f('DeliveryCount', 'int16', '0+'),
          ]),
        ]),
      ]),
      f('NodeEndpoints', '[]NodeEndpoint', '0+', {}, nodeEndpoint),
    ],
  },
} satisfies ApiDef;
