import { DelayedError, WaitingError, Worker, type Job } from 'bullmq';
import * as v from 'valibot';
import type { Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { createKnex, WORKER_POOL } from '../src/db/knex.js';
import { bindModels } from '../src/db/models.js';
import { createRedis, waitForReady } from '../src/redis/connection.js';
import { redisKeys } from '../src/shared/redis-keys.js';
import { EventPublisher } from '../src/shared/publisher.js';
import { RUN_QUEUE, RunJobSchema, type RunJob } from '../src/shared/jobs.js';
import { isDependencyOutage } from '../src/http/outage.js';
import { assertNoEviction } from './redis-policy.js';
import { RunExecutor } from './executor.js';
import { CancellationListener } from './cancellations.js';
import { searchKnowledgeBases } from '../src/knowledge/retrieval.js';
import { startIngestionWorker } from './knowledge/worker.js';
import { WorkerLifecycle } from './run-control.js';
import { LocalModel } from './models/local.js';
import { GatewayModel } from './models/gateway/provider.js';
import { UnconfiguredGateway } from './models/gateway/unconfigured.js';
import { LOCAL_MODEL } from '../src/shared/model-settings.js';
import type { ModelProvider } from './models/types.js';

export interface RunningWorkers {
  close(): Promise<void>;
}

/** How long after an outage hand-back the job is tried again. */
const OUTAGE_RETRY_MS = 1000;
/** Before the shutdown deadline, loops still running are cut off (they resume from their checkpoint). */
const HARD_STOP_MARGIN_MS = 5000;
/**
 * BullMQ's own stall limit is set out of the way: the executor counts a run's crashes and fails
 * it past RUN_MAX_CRASHES with an `error` event, which BullMQ's silent stall-failure could not do.
 */
const BULLMQ_MAX_STALLED = 1000;

/** `local` is the built-in model; every other name is a gateway model (agents naming one were refused unless a gateway is configured). */
function modelProviders(config: Config, logger: Logger): (model: string) => ModelProvider {
  const local = new LocalModel(config.model.localTokenDelayMs);
  const { gateway } = config.model;
  const remote = gateway.url && gateway.apiKey ? new GatewayModel({ ...gateway, url: gateway.url, apiKey: gateway.apiKey }, logger) : new UnconfiguredGateway();
  return (model) => (model === LOCAL_MODEL ? local : remote);
}

/** Connects, checks Redis, and starts the BullMQ run worker. */
export async function startWorkers(config: Config, logger: Logger): Promise<RunningWorkers> {
  const redis = createRedis(config.redis, 'patient', 'worker');
  await waitForReady(redis, 30_000);
  await assertNoEviction(redis);
  const knex = createKnex(config.databaseUrl, { ...WORKER_POOL, poolMax: Math.min(20, config.workerConcurrency) });
  const keys = redisKeys(config.redis.keyPrefix);
  const executor = new RunExecutor({
    knex,
    models: bindModels(knex),
    redis,
    keys,
    publisher: new EventPublisher(redis, keys),
    logger,
    now: () => new Date(),
    modelFor: modelProviders(config, logger),
    defaultModel: config.model.defaultModel,
    maxCrashes: config.runs.maxCrashes,
    searchKnowledge: (ids, query, topK) => searchKnowledgeBases(knex, ids, query, topK),
  });
  const cancellations = await CancellationListener.start(createRedis(config.redis, 'patient', 'worker-cancels'), keys.cancelChannel);
  const lifecycle = new WorkerLifecycle();

  const processRun = async (job: Job<RunJob>, token?: string) => {
    const { runId } = v.parse(RunJobSchema, job.data);
    const { controller, release } = cancellations.register(runId);
    let result;
    try {
      result = await executor.execute(runId, controller, lifecycle.controlFor(controller));
    } catch (err) {
      if (!isDependencyOutage(err)) throw err;
      result = 'outage' as const;
    } finally {
      release();
    }
    if (result === 'shutdown') {
      await job.moveToWait(token);
      throw new WaitingError();
    }
    if (result === 'outage') {
      await job.moveToDelayed(Date.now() + OUTAGE_RETRY_MS, token);
      throw new DelayedError();
    }
  };

  const worker = new Worker<RunJob>(RUN_QUEUE, processRun, {
    connection: createRedis(config.redis, 'patient', 'worker-bullmq'),
    prefix: keys.bullPrefix,
    concurrency: config.workerConcurrency,
    lockDuration: config.runs.jobLockMs,
    stalledInterval: config.runs.stalledIntervalMs,
    maxStalledCount: BULLMQ_MAX_STALLED,
  });
  worker.on('failed', (job, err) => logger.error({ err, job_id: job?.id }, 'run job failed'));
  worker.on('error', (err) => logger.error({ err }, 'worker error'));
  worker.on('stalled', (jobId) => logger.warn({ job_id: jobId }, 'run job stalled; it will resume on a worker'));
  await worker.waitUntilReady();
  const ingestion = await startIngestionWorker(config, knex, keys.bullPrefix, logger);
  logger.info({ concurrency: config.workerConcurrency }, 'worker ready');
  return {
    /** Stop taking jobs; running loops hand their runs back at the next breakpoint (or are cut off before the deadline). */
    async close() {
      lifecycle.drain();
      const hardStop = setTimeout(() => lifecycle.stopNow(), Math.max(0, config.shutdownTimeoutMs - HARD_STOP_MARGIN_MS));
      try {
        await Promise.all([worker.close(), ingestion.close()]);
      } finally {
        clearTimeout(hardStop);
        cancellations.close();
        redis.disconnect();
        await knex.destroy();
      }
    },
  };
}
