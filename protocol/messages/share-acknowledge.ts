// ShareAcknowledge (API key 79): a share group member's ACCEPT, RELEASE and REJECT of records it acquired (KIP-932).
import { field as f, type ApiDef } from '../schema/definition.js';
import { nodeEndpoint } from './share-fetch.js';

export const ShareAcknowledge = {
  apiKey: 79,
  name: 'ShareAcknowledge',
  request: {
    apiKey: 79,
    kind: 'request',
    name: 'ShareAcknowledgeRequest',
    validVersions: '1-2',
    flexibleVersions: '0+',
    fields: [
      f('GroupId', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('MemberId', 'string', '0+', { nullableVersions: '0+' }),
      f('ShareSessionEpoch', 'int32', '0+'),
      f('IsRenewAck', 'bool', '2+', { default: false }),
      f('Topics', '[]AcknowledgeTopic', '0+', {}, [
        f('TopicId', 'uuid', '0+', { mapKey: true }),
        f('Partitions', '[]AcknowledgePartition', '0+', {}, [
          f('PartitionIndex', 'int32', '0+', { mapKey: true }),
          f('AcknowledgementBatches', '[]AcknowledgementBatch', '0+', {}, [
            f('FirstOffset', 'int64', '0+'),
            f('LastOffset', 'int64', '0+'),
            f('AcknowledgeTypes', '[]int8', '0+'),
          ]),
        ]),
      ]),
    ],
  },
  response: {
    apiKey: 79,
    kind: 'response',
    name: 'ShareAcknowledgeResponse',
    validVersions: '1-2',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('AcquisitionLockTimeoutMs', 'int32', '2+', { ignorable: true }),
      f('Responses', '[]ShareAcknowledgeTopicResponse', '0+', {}, [
        f('TopicId', 'uuid', '0+', { mapKey: true }),
        f('Partitions', '[]PartitionData', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('ErrorCode', 'int16', '0+'),
          f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
          f('CurrentLeader', 'LeaderIdAndEpoch', '0+', {}, [f('LeaderId', 'int32', '0+'), f('LeaderEpoch', 'int32', '0+')]),
        ]),
      ]),
      f('NodeEndpoints', '[]NodeEndpoint', '0+', {}, nodeEndpoint),
    ],
  },
} satisfies ApiDef;
