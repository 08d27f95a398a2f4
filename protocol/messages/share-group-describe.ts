// ShareGroupDescribe (API key 77): a share group's state, epochs and members with their assignments (KIP-932).
import { field as f, struct, type ApiDef } from '../schema/definition.js';

export const ShareGroupDescribe = {
  apiKey: 77,
  name: 'ShareGroupDescribe',
  request: {
    apiKey: 77,
    kind: 'request',
    name: 'ShareGroupDescribeRequest',
    validVersions: '1',
    flexibleVersions: '0+',
    fields: [
      f('GroupIds', '[]string', '0+'),
      f('IncludeAuthorizedOperations', 'bool', '0+'),
    ],
  },
  response: {
    apiKey: 77,
    kind: 'response',
    name: 'ShareGroupDescribeResponse',
    validVersions: '1',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('Groups', '[]DescribedGroup', '0+', {}, [
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
        f('GroupId', 'string', '0+'),
        f('GroupState', 'string', '0+'),
        f('GroupEpoch', 'int32', '0+'),
        f('AssignmentEpoch', 'int32', '0+'),
        f('AssignorName', 'string', '0+'),
        f('Members', '[]Member', '0+', {}, [
          f('MemberId', 'string', '0+'),
          f('RackId', 'string', '0+', { nullableVersions: '0+', default: null }),
          f('MemberEpoch', 'int32', '0+'),
          f('ClientId', 'string', '0+'),
          f('ClientHost', 'string', '0+'),
          f('SubscribedTopicNames', '[]string', '0+'),
          f('Assignment', 'Assignment', '0+'),
        ]),
        f('AuthorizedOperations', 'int32', '0+', { default: -2147483648 }),
      ]),
    ],
    commonStructs: [
      struct('TopicPartitions', '0+', [
        f('TopicId', 'uuid', '0+'),
        f('TopicName', 'string', '0+'),
        f('Partitions', '[]int32', '0+'),
      ]),
      struct('Assignment', '0+', [
        f('TopicPartitions', '[]TopicPartitions', '0+'),
      ]),
    ],
  },
} satisfies ApiDef;
