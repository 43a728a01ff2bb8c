import { inject } from 'vitest';

/** The Redis deployments the run protocol's end-to-end suites run against. */
export const REDIS_MODES = ['single', 'cluster'] as const;
export type RedisMode = (typeof REDIS_MODES)[number];

/** Environment for a stack on the run's shared single Redis or its shared three-node cluster. */
export function redisEnv(mode: RedisMode): Record<string, string> {
  return mode === 'cluster' ? { REDIS_CLUSTER_NODES: inject('redisClusterNodes') } : {};
}
