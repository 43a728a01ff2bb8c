import { inject } from 'vitest';

/**
 * The Redis deployments the run protocol's end-to-end suites run against: runs.e2e and faults.e2e on both (a
 * run streamed through built processes, a node restarted); the engine's scripts meet the cluster in-process
 * (test/engine), so the other end-to-end files run on the single Redis only.
 */
export const REDIS_MODES = ['single', 'cluster'] as const;
/** For the end-to-end files whose cluster behaviour the engine's in-process tests cover. */
export const SINGLE_REDIS = ['single'] as const;
export type RedisMode = (typeof REDIS_MODES)[number];

/** Environment for a stack on the run's shared single Redis or its shared three-node cluster. */
export function redisEnv(mode: RedisMode): Record<string, string> {
  return mode === 'cluster' ? { REDIS_CLUSTER_NODES: inject('redisClusterNodes') } : {};
}

/** A `host:port,host:port` list (TEST_REDIS_CLUSTER_NODES, the provided redisClusterNodes) as connection nodes. */
export function clusterNodes(list: string): { host: string; port: number }[] {
  return list.split(',').map((node) => ({ host: node.split(':')[0]!, port: Number(node.split(':')[1]) }));
}
