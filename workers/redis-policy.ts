import type { Redis } from 'ioredis';

/** BullMQ loses jobs if Redis may evict keys; the worker refuses to start unless the policy is noeviction. */
export async function assertNoEviction(redis: Redis): Promise<void> {
  // INFO works where CONFIG is disabled (managed Redis services).
  const info = await redis.info('memory');
  const policy = /maxmemory_policy:(\S+)/.exec(info)?.[1];
  if (policy && policy !== 'noeviction') {
    throw new Error(`Redis maxmemory-policy is "${policy}"; it must be "noeviction" or queued jobs can be evicted`);
  }
}
