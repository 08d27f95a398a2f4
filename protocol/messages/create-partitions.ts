// CreatePartitions (API key 37): Adds partitions to topics.
import { field as f, type ApiDef } from '../schema/definition.js';

export const CreatePartitions = {
  apiKey: 37,
  name: 'CreatePartitions',
  request: {
    apiKey: 37,
    kind: 'request',
    name: 'CreatePartitionsRequest',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      f('Topics', '[]CreatePartitionsTopic', '0+', {}, [
        f('Name', 'string', '0+', { mapKey: true }),
        f('Count', 'int32', '0+'),
        f('Assignments', '[]CreatePartitionsAssignment', '0+', { nullableVersions: '0+' }, [
          f('BrokerIds', '[]int32', '0+'),
        ]),
      ]),
      f('TimeoutMs', 'int32', '0+'),
      f('ValidateOnly', 'bool', '0+'),
    ],
  },
  response: {
    apiKey: 37,
    kind: 'response',
    name: 'CreatePartitionsResponse',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('Results', '[]CreatePartitionsTopicResult', '0+', {}, [
        f('Name', 'string', '0+'),
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
      ]),
    ],
  },
} satisfies ApiDef;
