import type { QueueConfig } from '../../core/core.js';

/**
 * What the console shows that the core does not hold: the gateways of the
 * cluster and Kafka's topic-config catalogue. They belong to the gateway,
 * which the HTTP API does not import (front doors stand side by side), so
 * the composition root (src/index.ts) hands in the gateway's own account
 * of them (src/gateway/operator-view.ts). Without them (an HTTP
 * API built alone over a core) the console shows the core's own view.
 */
export interface ConsoleSources {
  cluster(): ConsoleCluster;
  /** Every Kafka config of a topic, as DescribeConfigs lists them. */
  describeTopicConfigs(config: QueueConfig): DescribedTopicConfig[];
  /** The queue settings of a new topic with these Kafka configs, or the sentence that refuses one. */
  newTopicConfig(configs: { name: string; value: string }[]): { config: Partial<QueueConfig> } | { problem: string };
  /** Partitions of a topic created without a count (the gateway's --default-partitions). */
  defaultPartitions: number;
}

export interface ConsoleCluster {
  clusterId: string | null;
  /** The node id of the gateway serving this console, or null when none runs beside it. */
  self: number | null;
  nodes: ConsoleNode[];
}

export interface ConsoleNode {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
  /** Advertised address by listener name. */
  listeners: Record<string, { host: string; port: number }>;
  /** The core it uses ("in-process:..." or an RPC address). */
  core: string;
  startedAt: number | null;
}

export interface DescribedTopicConfig {
  name: string;
  value: string | null;
  isDefault: boolean;
  readOnly: boolean;
}

/** The console over a core alone: no gateways to list, and the configs the topic stores as they were set. */
export const CORE_ONLY_SOURCES: ConsoleSources = {
  cluster: () => ({ clusterId: null, self: null, nodes: [] }),
  describeTopicConfigs: (config) => Object.entries(config.topicConfigs).map(([name, value]) => ({ name, value, isDefault: false, readOnly: false })),
  // The settings of a Kafka topic are the gateway's to decide: without it, the console creates none.
  newTopicConfig: () => ({ problem: 'This HTTP API runs without a Kafka gateway, which decides what a Kafka topic is; create the topic through a gateway, or as a Queen queue with POST /api/v1/configure.' }),
  defaultPartitions: 1,
};

