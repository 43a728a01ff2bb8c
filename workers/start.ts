import type { Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { createRedis, waitForReady } from '../src/redis/connection.js';
import { assertNoEviction } from './redis-policy.js';

export interface RunningWorkers {
  close(): Promise<void>;
}

/** Connects, checks Redis, and starts the BullMQ workers. */
export async function startWorkers(config: Config, logger: Logger): Promise<RunningWorkers> {
  const redis = createRedis(config.redis, 'patient', 'worker');
  await waitForReady(redis, 30_000);
  await assertNoEviction(redis);
  logger.info({ concurrency: config.workerConcurrency }, 'worker ready');
  return {
    async close() {
      redis.disconnect();
    },
  };
}
