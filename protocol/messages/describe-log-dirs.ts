// DescribeLogDirs (API key 35): Describes each log directory of a broker and the partitions it holds, with their sizes.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DescribeLogDirs = {
  apiKey: 35,
  name: 'DescribeLogDirs',
  request: {
    apiKey: 35,
    kind: 'request',
    name: 'DescribeLogDirsRequest',
    validVersions: '0-4',
    flexibleVersions: '2+',
    fields: [
      f('Topics', '[]DescribableLogDirTopic', '0+', { nullableVersions: '0+' }, [
        f('Topic', 'string', '0+', { mapKey: true }),
        f('Partitions', '[]int32', '0+'),
      ]),
    ],
  },
  response: {
    apiKey: 35,
    kind: 'response',
    name: 'DescribeLogDirsResponse',
    validVersions: '0-4',
    flexibleVersions: '2+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '3+', { ignorable: true }),
      f('Results', '[]DescribeLogDirsResult', '0+', {}, [
        f('ErrorCode', 'int16', '0+'),
        f('LogDir', 'string', '0+'),
        f('Topics', '[]DescribeLogDirsTopic', '0+', {}, [
          f('Name', 'string', '0+'),
          f('Partitions', '[]DescribeLogDirsPartition', '0+', {}, [
            f('PartitionIndex', 'int32', '0+'),
            f('PartitionSize', 'int64', '0+'),
            f('OffsetLag', 'int64', '0+'),
            f('IsFutureKey', 'bool', '0+'),
          ]),
        ]),
        f('TotalBytes', 'int64', '4+', { ignorable: true, default: -1 }),
        f('UsableBytes', 'int64', '4+', { ignorable: true, default: -1 }),
      ]),
    ],
  },
} satisfies ApiDef;
