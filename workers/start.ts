import { Worker } from 'bullmq';
import * as v from 'valibot';
import type { Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { createKnex } from '../src/db/knex.js';
import { bindModels } from '../src/db/models.js';
import { createRedis, waitForReady } from '../src/redis/connection.js';
import { redisKeys } from '../src/shared/redis-keys.js';
import { EventPublisher } from '../src/shared/publisher.js';
import { RUN_QUEUE, RunJobSchema, type RunJob } from '../src/shared/jobs.js';
import { assertNoEviction } from './redis-policy.js';
import { RunExecutor } from './executor.js';
import { LocalModel } from './models/local.js';
import type { ModelProvider } from './models/types.js';

export interface RunningWorkers {
  close(): Promise<void>;
}

function modelProviders(config: Config): (model: string) => ModelProvider {
  const local = new LocalModel(config.model.localTokenDelayMs);
  return () => local;
}

/** Connects, checks Redis, and starts the BullMQ run worker. */
export async function startWorkers(config: Config, logger: Logger): Promise<RunningWorkers> {
  const redis = createRedis(config.redis, 'patient', 'worker');
  await waitForReady(redis, 30_000);
  await assertNoEviction(redis);
  const knex = createKnex(config.databaseUrl, Math.min(20, config.workerConcurrency));
  const keys = redisKeys(config.redis.keyPrefix);
  const executor = new RunExecutor({
    knex,
    models: bindModels(knex),
    redis,
    keys,
    publisher: new EventPublisher(redis, keys),
    logger,
    now: () => new Date(),
    modelFor: modelProviders(config),
  });
  const controller = new AbortController();
  const worker = new Worker<RunJob>(
    RUN_QUEUE,
    async (job) => {
      const { runId } = v.parse(RunJobSchema, job.data);
      await executor.execute(runId, controller.signal);
    },
    {
      connection: createRedis(config.redis, 'patient', 'worker-bullmq'),
      prefix: keys.bullPrefix,
      concurrency: config.workerConcurrency,
    },
  );
  worker.on('failed', (job, err) => logger.error({ err, job_id: job?.id }, 'run job failed'));
  worker.on('error', (err) => logger.error({ err }, 'worker error'));
  await worker.waitUntilReady();
  logger.info({ concurrency: config.workerConcurrency }, 'worker ready');
  return {
    async close() {
      await worker.close();
      controller.abort();
      redis.disconnect();
      await knex.destroy();
    },
  };
}
