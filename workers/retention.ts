import { Worker } from 'bullmq';
import { producerQueue } from '../src/shared/jobs.js';
import type { Knex } from 'knex';
import type { Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { createRedis } from '../src/redis/connection.js';
import { redisKeys } from '../src/shared/redis-keys.js';
import type { ScriptedRedis } from '../src/shared/redis-scripts.js';
import type { WebEngine } from '../src/engine/web-engine.js';
import { AuditLog } from '../src/audit/log.js';
import { ConversationEraser, DEFAULT_ERASE, type EraseOptions } from '../src/conversations/erase.js';

/**
 * Conversation retention (DESIGN §20): with CONVERSATION_RETENTION_DAYS set, a BullMQ job
 * scheduler on a queue of its own leaves one job per tick however many workers listen; the job
 * deletes conversations idle that long, in bounded batches (ConversationEraser.expireIdle). A
 * second job at the same time (a tick and a manual one) is harmless: each conversation is held
 * by one of them. Unset: the scheduler is removed and nothing expires.
 */
export const RETENTION_QUEUE = 'conversation-retention';
export const RETENTION_SCHEDULER = 'conversation-retention';
/** How often the job runs: retention is counted in days, and each run's work is bounded. */
export const RETENTION_EVERY_MS = 3600 * 1000;
const JOB_OPTIONS = { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } };

export interface RetentionClients {
  knex: Knex;
  /** The worker's command connection (scripts registered). */
  redis: ScriptedRedis;
  logger: Logger;
  /** The worker's web-side run engine: conversations are held and runs' streams dropped through it. */
  engine: Pick<WebEngine, 'holdForDeletion' | 'discardStream'>;
}

/** The retention job's work, apart from BullMQ (the bench and the tests call it too). */
export function retentionEraser({ knex, engine }: Pick<RetentionClients, 'knex' | 'engine'>, options: EraseOptions = DEFAULT_ERASE): ConversationEraser {
  return new ConversationEraser(knex, engine, new AuditLog(knex), options);
}

export async function startRetentionWorker(config: Config, clients: RetentionClients): Promise<{ close(): Promise<void> }> {
  const { redis, logger } = clients;
  const keys = redisKeys(config.redis);
  const prefix = keys.bullPrefix(RETENTION_QUEUE);
  const queue = producerQueue(RETENTION_QUEUE, redis, prefix);
  const days = config.conversations.retentionDays;
  if (days === null) {
    await queue.removeJobScheduler(RETENTION_SCHEDULER).catch((err: unknown) => logger.warn({ err }, 'could not remove the retention job scheduler'));
    await queue.close();
    return { close: async () => {} };
  }
  const eraser = retentionEraser(clients);
  const connection = createRedis(config.redis, 'patient', 'worker-retention');
  const worker = new Worker(
    RETENTION_QUEUE,
    async () => {
      const started = Date.now();
      const outcome = await eraser.expireIdle(days);
      const fields = { ...outcome, retention_days: days, ms: Date.now() - started };
      if (outcome.deleted > 0 || outcome.skipped > 0) logger.info(fields, 'conversation retention');
      else logger.debug(fields, 'conversation retention');
      return outcome;
    },
    { connection, prefix, concurrency: 1, lockDuration: config.runs.jobLockMs, stalledInterval: config.runs.stalledIntervalMs },
  );
  worker.on('failed', (job, err) => logger.error({ err, job_id: job?.id }, 'conversation retention job failed; the next tick tries again'));
  worker.on('error', (err) => logger.error({ err }, 'retention worker error'));
  await worker.waitUntilReady();
  await queue.upsertJobScheduler(RETENTION_SCHEDULER, { every: RETENTION_EVERY_MS }, { name: 'expire', data: {}, opts: JOB_OPTIONS });
  return {
    async close() {
      await worker.close();
      await queue.close();
      connection.disconnect();
    },
  };
}
