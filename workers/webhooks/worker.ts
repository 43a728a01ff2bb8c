import { Worker } from 'bullmq';
import type { Config } from '../../src/config.js';
import type { Logger } from '../../src/logger.js';
import { createRedis } from '../../src/redis/connection.js';
import { WEBHOOK_QUEUE, type WebhookJob } from '../../src/shared/jobs.js';
import type { WebhookOutbox } from '../../src/webhooks/outbox.js';
import type { WebhookDeliverer } from './deliverer.js';

/** Deliveries in flight per worker process: each mostly waits on a receiver. */
const DELIVERY_CONCURRENCY = 32;
/** How often each worker looks for delivery rows whose writer died before queueing them. */
const SWEEP_INTERVAL_MS = 5000;

/** The webhook delivery queue's worker, and the outbox sweeper beside it. */
export async function startWebhookWorker(config: Config, bullPrefix: string, deliverer: WebhookDeliverer, outbox: WebhookOutbox, logger: Logger) {
  const worker = new Worker<WebhookJob>(
    WEBHOOK_QUEUE,
    (job, token) => deliverer.deliver(job, token),
    {
      connection: createRedis(config.redis, 'patient', 'worker-webhooks'),
      prefix: bullPrefix,
      concurrency: DELIVERY_CONCURRENCY,
      // A worker that dies mid-attempt: the job is taken up again elsewhere, under the same webhook-id.
      lockDuration: config.runs.jobLockMs,
      stalledInterval: config.runs.stalledIntervalMs,
    },
  );
  worker.on('failed', (job, err) => logger.warn({ delivery_id: job?.data.deliveryId, attempt: job?.attemptsMade, err: err.message }, 'webhook attempt failed'));
  worker.on('error', (err) => logger.error({ err }, 'webhook worker error'));
  await worker.waitUntilReady();
  const sweeper = setInterval(() => {
    outbox.sweep().then(
      (queued) => queued > 0 && logger.info({ queued }, 'queued webhook deliveries left without a job'),
      (err: unknown) => logger.warn({ err }, 'webhook outbox sweep failed'),
    );
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();
  return {
    async close() {
      clearInterval(sweeper);
      await worker.close();
    },
  };
}
