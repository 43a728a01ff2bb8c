import { setMaxListeners } from 'node:events';
import { DelayedError, WaitingError, Worker, type Job } from 'bullmq';
import * as v from 'valibot';
import type { Knex } from 'knex';
import type { Config } from '../../src/config.js';
import type { Logger } from '../../src/logger.js';
import type { Models } from '../../src/db/models.js';
import type { Metrics } from '../../src/metrics/registry.js';
import { createRedis } from '../../src/redis/connection.js';
import { redisKeys } from '../../src/shared/redis-keys.js';
import type { ScriptedRedis } from '../../src/shared/redis-scripts.js';
import { EVAL_QUEUE, EvalJobSchema, producerQueue, type EvalJob } from '../../src/shared/jobs.js';
import { isDependencyOutage } from '../../src/shared/outage.js';
import type { WebEngine } from '../../src/engine/web-engine.js';
import { EventRelay } from '../../src/runs/relay.js';
import { EvalStore, type EvalRow } from '../../src/evals/store.js';
import { EVAL_CONCURRENCY_MAX } from '../../src/evals/records.js';
import type { WebhookOutbox } from '../../src/webhooks/outbox.js';
import type { ModelProvider } from '../models/types.js';
import { workerRunService } from '../run-service.js';
import { EvalDriver } from './driver.js';
import { evalSweep } from './sweep.js';
import { modelJudge } from './judge.js';
import type { CpuWork } from '../../src/cpu/work.js';

/** BullMQ's stall limit out of the way: a driver that dies is always replaced (it holds no state of its own). */
const DRIVER_MAX_STALLED = 1_000_000;
/** How long after a dependency outage a driver's job is tried again. */
const OUTAGE_RETRY_MS = 1000;
/** How often a worker queues again the active evals whose driver job is gone (lost with Redis, or never queued). */
const SWEEP_INTERVAL_MS = 60_000;
/** Postgres ended a statement to break a deadlock or a serialization conflict: tried again, it goes through. */
const isTransientConflict = (err: unknown) => ['40P01', '40001'].includes(String((err as { code?: unknown } | null)?.code));

export interface EvalWorkerClients {
  knex: Knex;
  models: Models;
  redis: ScriptedRedis;
  logger: Logger;
  metrics?: Metrics;
  outbox: WebhookOutbox;
  modelFor: (model: string) => ModelProvider;
  /** The json_schema scorer's validation off the event loop (the worker's CpuPool); inline when absent. */
  cpu?: CpuWork;
  /** The worker's web-side run engine: items' runs start, are read and queued again through it. */
  engine: WebEngine;
}

export interface RunningEvalWorker {
  /** Queues again the next batch of active evals whose job is missing (workers/evals/sweep.ts); how many it looked at. */
  sweep(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Evals' side of a worker process (DESIGN §24): a BullMQ worker on the eval queue whose jobs each
 * drive one eval (at most EVAL_DRIVERS_PER_WORKER at once), and a sweep that queues again an active
 * eval whose job is gone. The eval's runs are ordinary run jobs, on any worker.
 */
export async function startEvalWorker(config: Config, clients: EvalWorkerClients): Promise<RunningEvalWorker> {
  const { knex, redis, logger, engine } = clients;
  const keys = redisKeys(config.redis);
  const evalQueue = producerQueue<EvalJob>(EVAL_QUEUE, redis, keys.bullPrefix(EVAL_QUEUE));
  const subscriber = createRedis(config.redis, 'subscriber', 'worker-eval-doorbells');
  const reader = createRedis(config.redis, 'stream-reader', 'worker-eval-reader');
  const relay = new EventRelay(subscriber, reader, engine.streams, (err) => logger.warn({ err }, 'eval driver could not read a run stream'));
  const store = new EvalStore(knex);
  const requeue = async (run: { id: string; conversation_id: string; user_id: string }, budgets: EvalRow['budgets']) => {
    const queued = await engine.requeue({ runId: run.id, conversationId: run.conversation_id, userId: run.user_id, ...(budgets.length > 0 ? { budgets } : {}) });
    if (queued) logger.warn({ run_id: run.id }, 'an eval item’s run was queued without a job; queued again');
    return queued;
  };
  const driver = new EvalDriver({ store, runs: workerRunService(config, clients), relay, engine, outbox: clients.outbox, judge: modelJudge(clients.modelFor), checkOutput: clients.cpu && ((format, text) => clients.cpu!.checkOutput(format, text)), logger, requeue });

  // Shutting down, drivers stop following their items and hand their evals back to the queue.
  const closing = new AbortController();
  // Every lane of every eval driven here waits on it at once.
  setMaxListeners(config.evals.driversPerWorker * (EVAL_CONCURRENCY_MAX + 1) * 2, closing.signal);
  const drive = async (job: Job<EvalJob>, token?: string) => {
    const { evalId } = v.parse(EvalJobSchema, job.data);
    const outcome = await driver.drive(evalId, closing.signal).catch(async (err: unknown) => {
      if (closing.signal.aborted) return 'handed_back' as const;
      if (isDependencyOutage(err) || isTransientConflict(err)) {
        logger.warn({ err, eval_id: evalId }, 'eval driver met an outage; it resumes shortly');
        return 'outage' as const;
      }
      logger.error({ err, eval_id: evalId }, 'eval driver failed; the eval fails');
      const ended = await store.fail(evalId, { code: 'driver_error', message: 'The eval stopped on an internal error' }).catch(() => undefined);
      if (ended) await clients.outbox.enqueue(ended.deliveries).catch(() => undefined);
      return 'ended' as const;
    });
    if (outcome === 'outage') {
      await job.moveToDelayed(Date.now() + OUTAGE_RETRY_MS, token);
      throw new DelayedError();
    }
    if (outcome === 'handed_back') {
      await job.moveToWait(token);
      throw new WaitingError();
    }
  };

  const connection = createRedis(config.redis, 'patient', 'worker-evals');
  const worker = new Worker<EvalJob>(EVAL_QUEUE, drive, {
    connection,
    prefix: keys.bullPrefix(EVAL_QUEUE),
    concurrency: config.evals.driversPerWorker,
    lockDuration: config.runs.jobLockMs,
    stalledInterval: config.runs.stalledIntervalMs,
    maxStalledCount: DRIVER_MAX_STALLED,
  });
  worker.on('error', (err) => logger.error({ err }, 'eval worker error'));
  worker.on('stalled', (jobId) => logger.warn({ eval_id: jobId }, 'eval driver stalled; another worker resumes it'));
  await worker.waitUntilReady();

  const sweep = evalSweep(knex, evalQueue);
  const sweeping = setInterval(() => void sweep().catch((err: unknown) => logger.warn({ err }, 'eval sweep failed')), SWEEP_INTERVAL_MS);
  sweeping.unref();
  return {
    sweep,
    async close() {
      clearInterval(sweeping);
      closing.abort();
      await worker.close();
      await evalQueue.close();
      connection.disconnect();
      subscriber.disconnect();
      reader.disconnect();
    },
  };
}
