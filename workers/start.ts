import { DelayedError, WaitingError, Worker, type Job } from 'bullmq';
import * as v from 'valibot';
import type { Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { createKnex, WORKER_POOL } from '../src/db/knex.js';
import { bindModels } from '../src/db/models.js';
import { workerServices } from './runs/assembly.js';
import { startWebhookWorker } from './webhooks/worker.js';
import { startWakeSweep } from './runs/wake-sweep.js';
import { startUnqueuedSweep } from './runs/unqueued-sweep.js';
import { createRedis, waitForReady } from '../src/redis/connection.js';
import { INGEST_QUEUE, RUN_QUEUE, RunJobSchema, producerQueue, WEBHOOK_QUEUE, type RunJob } from '../src/shared/jobs.js';
import { isDependencyOutage } from '../src/shared/outage.js';
import { assertNoEviction } from './redis-policy.js';
import { RunExecutor, type ExecutionResult } from './runs/executor.js';
import { CancellationListener } from './runs/cancellations.js';
import { startIngestionWorker } from './knowledge/worker.js';
import { WorkerLifecycle } from './runs/run-control.js';
import type { Metrics } from '../src/metrics/registry.js';
import { serveWorkerMetrics } from './metrics.js';
import { startScheduleWorker } from './schedules.js';
import { startRetentionWorker } from './retention.js';
import { startEvalWorker } from './evals/worker.js';
import { CpuPool } from '../src/cpu/pool.js';
import { buildWebEngine } from '../src/engine/web-engine.js';

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

/** A run job's ids as its log lines name them (DESIGN §12). */
const jobLogFields = (data: RunJob | undefined) =>
  data ? { run_id: data.runId, conversation_id: data.conversationId, user_id: data.userId, request_id: data.requestId ?? null } : {};

/** Connects, checks Redis, and starts the BullMQ run worker. */
export async function startWorkers(config: Config, logger: Logger, metrics: Metrics): Promise<RunningWorkers> {
  const redis = createRedis(config.redis, 'worker-commands', 'worker');
  await waitForReady(redis, 30_000);
  await assertNoEviction(redis);
  const knex = createKnex(config.databaseUrl, { ...WORKER_POOL, poolMax: config.databasePoolMax.worker });
  const models = bindModels(knex);
  // Callers' output schemas are compiled and answers validated on threads (DESIGN §21): the loop keeps serving runs.
  const cpu = new CpuPool(config.cpuPool, 'schema-tasks');
  const services = workerServices(config, { knex, models, redis, logger, metrics, cpu });
  const { keys } = services;
  const executor = new RunExecutor(services.deps);
  // DESIGN §25: with pgvector, the memories' HNSW index is built in the background (once; other workers skip it).
  services.memories.ensureIndex().then(
    (built) => built && logger.info('memory vector index ready'),
    (err: unknown) => logger.warn({ err }, 'the memory vector index could not be built; searches scan the user\'s memories'),
  );
  const cancellations = await CancellationListener.start(createRedis(config.redis, 'subscriber', 'worker-cancels'), keys.cancelChannel);
  const lifecycle = new WorkerLifecycle();

  const processRun = async (job: Job<RunJob>, token?: string) => {
    const data = v.parse(RunJobSchema, job.data);
    const { controller, release } = cancellations.register(data.runId);
    let result: ExecutionResult;
    try {
      const assignment = { ...data, attempt: job.attemptsStarted, crashes: job.stalledCounter };
      result = await executor.execute(assignment, controller, lifecycle.controlFor(controller));
    } catch (err) {
      if (!isDependencyOutage(err)) throw err;
      result = { next: 'retry', reason: 'outage' };
    } finally {
      release();
    }
    if (result.next === 'retry' && result.reason === 'shutdown') {
      await job.moveToWait(token);
      throw new WaitingError();
    }
    if (result.next === 'retry') {
      await job.moveToDelayed(Date.now() + OUTAGE_RETRY_MS, token);
      throw new DelayedError();
    }
    if (result.next === 'queued') {
      // Behind another run of the conversation (DESIGN §19): that run wakes the job when it hands over.
      await job.moveToDelayed(result.untilMs, token);
      if (result.recheck && (await executor.admitted(result.ref))) await job.promote();
      throw new DelayedError();
    }
    if (result.next === 'wait') {
      // No worker slot and no lock while a person decides: the job waits, delayed until the deadline.
      await job.moveToDelayed(result.untilMs, token);
      if (await executor.parked(result.ref)) await job.promote();
      throw new DelayedError();
    }
  };

  const worker = new Worker<RunJob>(RUN_QUEUE, processRun, {
    connection: createRedis(config.redis, 'patient', 'worker-bullmq'),
    prefix: keys.bullPrefix(RUN_QUEUE),
    concurrency: config.workerConcurrency,
    lockDuration: config.runs.jobLockMs,
    stalledInterval: config.runs.stalledIntervalMs,
    maxStalledCount: BULLMQ_MAX_STALLED,
  });
  worker.on('failed', (job, err) => logger.error({ err, job_id: job?.id, ...jobLogFields(job?.data) }, 'run job failed'));
  worker.on('error', (err) => logger.error({ err }, 'worker error'));
  worker.on('stalled', (jobId) => logger.warn({ job_id: jobId }, 'run job stalled; it will resume on a worker'));
  await worker.waitUntilReady();
  const ingestion = await startIngestionWorker(config, knex, services.knowledge, keys.bullPrefix(INGEST_QUEUE), logger);
  const webhooks = await startWebhookWorker(config, keys.bullPrefix(WEBHOOK_QUEUE), services.deliverer, services.outbox, logger);
  const runQueue = producerQueue<RunJob>(RUN_QUEUE, redis, keys.bullPrefix(RUN_QUEUE));
  // The web's side of the engine, once for the worker: schedules' ticks, evals' items and retention act on runs through it.
  const engine = buildWebEngine({ knex, models, redis, keys, queue: runQueue }, { runs: config.runs, preparedStatements: config.databasePreparedStatements });
  const schedules = await startScheduleWorker(config, { knex, models, redis, logger, metrics, engine });
  const retention = await startRetentionWorker(config, { knex, redis, logger, engine });
  const evals = await startEvalWorker(config, { knex, models, redis, logger, metrics, outbox: services.outbox, modelFor: services.deps.modelFor, cpu, engine });
  const wakeSweep = startWakeSweep(knex, services.deps.engine, runQueue, logger);
  const unqueuedSweep = startUnqueuedSweep(knex, engine, logger);
  const metricsServer = config.metrics.enabled && config.metrics.workerPort !== undefined ? await serveWorkerMetrics(config, { knex, redis, logger, metrics }, config.metrics.workerPort) : undefined;
  logger.info({ concurrency: config.workerConcurrency }, 'worker ready');
  return {
    /** Stop taking jobs; running loops hand their runs back at the next breakpoint (or are cut off before the deadline). */
    async close() {
      lifecycle.drain();
      const hardStop = setTimeout(() => lifecycle.stopNow(), Math.max(0, config.shutdownTimeoutMs - HARD_STOP_MARGIN_MS));
      try {
        await Promise.all([worker.close(), ingestion.close(), webhooks.close(), schedules.close(), retention.close(), evals.close()]);
      } finally {
        clearTimeout(hardStop);
        cancellations.close();
        wakeSweep.close();
        unqueuedSweep.close();
        await metricsServer?.close();
        await runQueue.close();
        await services.close();
        await cpu.close();
        redis.disconnect();
        await knex.destroy();
      }
    },
  };
}
