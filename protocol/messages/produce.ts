// Produce (API key 0): Appends record batches to topic partitions.
import { field as f, type ApiDef } from '../schema/definition.js';

export const Produce = {
  apiKey: 0,
  name: 'Produce',
  request: {
    apiKey: 0,
    kind: 'request',
    name: 'ProduceRequest',
    validVersions: '0-12',
    flexibleVersions: '9+',
    fields: [
      f('TransactionalId', 'string', '3+', { nullableVersions: '3+', default: null }),
      f('Acks', 'int16', '0+'),
      f('TimeoutMs', 'int32', '0+'),
      f('TopicData', '[]TopicProduceData', '0+', {}, [
        f('Name', 'string', '0+', { mapKey: true }),
        f('PartitionData', '[]PartitionProduceData', '0+', {}, [
          f('Index', 'int32', '0+'),
          f('Records', 'records', '0+', { nullableVersions: '0+' }),
        ]),
      ]),
    ],
  },
  response: {
    apiKey: 0,
    kind: 'response',
    name: 'ProduceResponse',
    validVersions: '0-12',
    flexibleVersions: '9+',
    fields: [
      f('Responses', '[]TopicProduceResponse', '0+', {}, [
        f('Name', 'string', '0+', { mapKey: true }),
        f('PartitionResponses', '[]PartitionProduceResponse', '0+', {}, [
          f('Index', 'int32', '0+'),
          f('ErrorCode', 'int16', '0+'),
          f('BaseOffset', 'int64', '0+'),
          f('LogAppendTimeMs', 'int64', '2+', { default: -1n, ignorable: true }),
          f('LogStartOffset', 'int64', '5+', { default: -1n, ignorable: true }),
          f('RecordErrors', '[]BatchIndexAndErrorMessage', '8+', { ignorable: true }, [
            f('BatchIndex', 'int32', '8+'),
            f('BatchIndexErrorMessage', 'string', '8+', { nullableVersions: '8+', default: null }),
          ]),
          f('ErrorMessage', 'string', '8+', { nullableVersions: '8+', default: null, ignorable: true }),
          f('CurrentLeader', 'LeaderIdAndEpoch', '10+', { tag: 0, taggedVersions: '10+' }, [
            f('LeaderId', 'int32', '10+', { default: -1 }),
            f('LeaderEpoch', 'int32', '10+', { default: -1 }),
          ]),
        ]),
      ]),
      f('ThrottleTimeMs', 'int32', '1+', { default: 0, ignorable: true }),
      f('NodeEndpoints', '[]NodeEndpoint', '10+', { tag: 0, taggedVersions: '10+' }, [
        f('NodeId', 'int32', '10+', { mapKey: true }),
        f('Host', 'string', '10+'),
        f('Port', 'int32', '10+'),
        f('Rack', 'string', '10+', { nullableVersions: '10+', default: null }),
      ]),
    ],
  },
} satisfies ApiDef;
