// TxnOffsetCommit (API key 28): Commits group offsets inside a transaction.
import { field as f, type ApiDef } from '../schema/definition.js';

export const TxnOffsetCommit = {
  apiKey: 28,
  name: 'TxnOffsetCommit',
  request: {
    apiKey: 28,
    kind: 'request',
    name: 'TxnOffsetCommitRequest',
    validVersions: '0-5',
    flexibleVersions: '3+',
    fields: [
      f('TransactionalId', 'string', '0+'),
      f('GroupId', 'string', '0+'),
      f('ProducerId', 'int64', '0+'),
      f('ProducerEpoch', 'int16', '0+'),
      f('GenerationId', 'int32', '3+', { default: -1 }),
      f('MemberId', 'string', '3+', { default: "" }),
      f('GroupInstanceId', 'string', '3+', { nullableVersions: '3+', default: null }),
      f('Topics', '[]TxnOffsetCommitRequestTopic', '0+', {}, [
        f('Name', 'string', '0+'),
        f('Partitions', '[]TxnOffsetCommitRequestPartition', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('CommittedOffset', 'int64', '0+'),
          f('CommittedLeaderEpoch', 'int32', '2+', { default: -1, ignorable: true }),
          f('CommittedMetadata', 'string', '0+', { nullableVersions: '0+' }),
        ]),
      ]),
    ],
  },
  response: {
    apiKey: 28,
    kind: 'response',
    name: 'TxnOffsetCommitResponse',
    validVersions: '0-5',
    flexibleVersions: '3+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('Topics', '[]TxnOffsetCommitResponseTopic', '0+', {}, [
        f('Name', 'string', '0+'),
        f('Partitions', '[]TxnOffsetCommitResponsePartition', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('ErrorCode', 'int16', '0+'),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
