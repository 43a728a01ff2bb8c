import { Worker, type Job } from 'bullmq';
import * as v from 'valibot';
import type { Knex } from 'knex';
import type { Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import type { Models } from '../src/db/models.js';
import { Metrics } from '../src/metrics/registry.js';
import { createRedis } from '../src/redis/connection.js';
import { redisKeys } from '../src/shared/redis-keys.js';
import type { ScriptedRedis } from '../src/shared/redis-scripts.js';
import { SCHEDULE_QUEUE, ScheduleTickSchema, producerQueue, type ScheduleTick } from '../src/shared/jobs.js';
import { ScheduleStore } from '../src/schedules/store.js';
import { plannedAt, TickScheduler } from '../src/schedules/scheduler.js';
import { TickProcessor } from './schedules/ticks.js';
import { workerRunService } from './run-service.js';
import type { WebEngine } from '../src/engine/web-engine.js';
import { reconcileTimers } from './schedules/reconcile.js';

/** Ticks in flight per worker process: each only starts a run (a few statements), so a few keep up with many schedules. */
const TICK_CONCURRENCY = 32;

export interface ScheduleWorkerClients {
  knex: Knex;
  models: Models;
  /** The worker's command connection (the run protocol's): queues and run starts share it. */
  redis: ScriptedRedis;
  logger: Logger;
  metrics?: Metrics;
  /** The worker's web-side run engine: ticks start runs through it. */
  engine: WebEngine;
}

export interface RunningScheduleWorker {
  close(): Promise<void>;
}

/** A tick job's processor: it logs what the tick did and never throws (BullMQ would count a failure, and a retry could start a second run). */
function tickProcessor(ticks: TickProcessor, logger: Logger) {
  return async (job: Job<ScheduleTick>): Promise<void> => {
    const data = v.safeParse(ScheduleTickSchema, job.data);
    const planned = plannedAt(job.id);
    if (!data.success || !planned) {
      logger.warn({ job_id: job.id }, 'schedule tick without a schedule id or planned instant; ignored');
      return;
    }
    const takenAt = Date.now();
    const fields = { schedule_id: data.output.scheduleId, planned_at: planned.toISOString(), lateness_ms: takenAt - planned.getTime() };
    try {
      const outcome = { ...(await ticks.process(data.output.scheduleId, planned)), ms: Date.now() - takenAt };
      if ('err' in outcome) logger.warn({ ...fields, ...outcome }, 'schedule tick could not start its run');
      else if (outcome.outcome === 'idle' || outcome.outcome === 'removed') logger.debug({ ...fields, ...outcome }, 'schedule tick');
      else logger.info({ ...fields, ...outcome }, 'schedule tick');
    } catch (err) {
      logger.error({ ...fields, err }, 'schedule tick failed; it started no run');
    }
  };
}

/**
 * Schedules' side in a worker process (DESIGN §19): a BullMQ worker on the schedule queue whose
 * ticks start runs, and, in the background, a reconciliation of timers with Postgres.
 */
export async function startScheduleWorker(config: Config, clients: ScheduleWorkerClients): Promise<RunningScheduleWorker> {
  const { knex, models, redis, logger } = clients;
  const keys = redisKeys(config.redis);
  const scheduleQueue = producerQueue<ScheduleTick>(SCHEDULE_QUEUE, redis, keys.bullPrefix(SCHEDULE_QUEUE));
  const store = new ScheduleStore(knex, models);
  const timers = new TickScheduler(scheduleQueue, redis);
  const ticks = new TickProcessor(store, timers, workerRunService(config, clients));
  const connection = createRedis(config.redis, 'patient', 'worker-schedules');
  const worker = new Worker<ScheduleTick>(SCHEDULE_QUEUE, tickProcessor(ticks, logger), {
    connection,
    prefix: keys.bullPrefix(SCHEDULE_QUEUE),
    concurrency: TICK_CONCURRENCY,
    lockDuration: config.runs.jobLockMs,
    stalledInterval: config.runs.stalledIntervalMs,
  });
  worker.on('error', (err) => logger.error({ err }, 'schedule worker error'));
  await worker.waitUntilReady();
  const reconciled = reconcileTimers(store, timers).then(
    (counts) => (counts.registered + counts.removed > 0 ? logger.info(counts, 'schedule timers reconciled with Postgres') : undefined),
    (err: unknown) => logger.warn({ err }, 'schedule timers could not be reconciled; the next worker start tries again'),
  );
  return {
    async close() {
      await worker.close();
      await reconciled;
      await scheduleQueue.close();
      connection.disconnect();
    },
  };
}
