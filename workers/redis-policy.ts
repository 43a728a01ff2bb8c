import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from '../src/shared/redis-scripts.js';

/** BullMQ loses jobs if Redis may evict keys; the worker refuses to start unless the policy is noeviction (on every master of a cluster). */
export async function assertNoEviction(redis: RedisClient): Promise<void> {
  const nodes = redis.isCluster ? (redis as Cluster).nodes('master') : [redis as Redis];
  for (const node of nodes) {
    // INFO works where CONFIG is disabled (managed Redis services).
    const info = await node.info('memory');
    const policy = /maxmemory_policy:(\S+)/.exec(info)?.[1];
    if (policy && policy !== 'noeviction') {
      throw new Error(`Redis maxmemory-policy is "${policy}"; it must be "noeviction" or queued jobs can be evicted`);
    }
  }
}
