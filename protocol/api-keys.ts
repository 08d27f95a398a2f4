/** Kafka API keys for every API the gateway serves. */
export const ApiKey = {
  Produce: 0,
  Fetch: 1,
  ListOffsets: 2,
  Metadata: 3,
  OffsetCommit: 8,
  OffsetFetch: 9,
  FindCoordinator: 10,
  JoinGroup: 11,
  Heartbeat: 12,
  LeaveGroup: 13,
  SyncGroup: 14,
  DescribeGroups: 15,
  ListGroups: 16,
  SaslHandshake: 17,
  ApiVersions: 18,
  CreateTopics: 19,
  DeleteTopics: 20,
  DeleteRecords: 21,
  InitProducerId: 22,
  OffsetForLeaderEpoch: 23,
  AddPartitionsToTxn: 24,
  AddOffsetsToTxn: 25,
  EndTxn: 26,
  TxnOffsetCommit: 28,
  DescribeAcls: 29,
  CreateAcls: 30,
  DeleteAcls: 31,
  DescribeConfigs: 32,
  AlterConfigs: 33,
  DescribeLogDirs: 35,
  SaslAuthenticate: 36,
  CreatePartitions: 37,
  DeleteGroups: 42,
  IncrementalAlterConfigs: 44,
  AlterPartitionReassignments: 45,
  ListPartitionReassignments: 46,
  OffsetDelete: 47,
  DescribeClientQuotas: 48,
  AlterClientQuotas: 49,
  DescribeUserScramCredentials: 50,
  AlterUserScramCredentials: 51,
  DescribeQuorum: 55,
  DescribeCluster: 60,
  DescribeProducers: 61,
  DescribeTransactions: 65,
  ListTransactions: 66,
  ConsumerGroupHeartbeat: 68,
  ConsumerGroupDescribe: 69,
  DescribeTopicPartitions: 75,
} as const;

export type ApiName = keyof typeof ApiKey;

const NAMES: ReadonlyMap<number, ApiName> = new Map(
  (Object.entries(ApiKey) as [ApiName, number][]).map(([name, key]) => [key, name]),
);

export function apiName(key: number): string {
  return NAMES.get(key) ?? `UnknownApi${key}`;
}
