import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import type { Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import type { ScriptedRedis } from '../src/shared/redis-scripts.js';
import { buildIdentityServices } from '../src/services.js';
import { QueueStats } from '../src/admin/queues.js';
import { INGEST_QUEUE, RUN_QUEUE, WEBHOOK_QUEUE, producerQueue } from '../src/shared/jobs.js';
import type { Metrics } from '../src/metrics/registry.js';
import { metricsApp, scrapeGuard } from '../src/metrics/http.js';

/** The metric gauges read queue counts this often at most (DESIGN §12). */
const QUEUE_COUNTS_TTL_MS = 5000;

/**
 * WORKER_METRICS_PORT: the worker's registry at `GET /metrics`, behind the web's guard
 * (METRICS_TOKEN, else an admin credential, checked against the same users and keys).
 */
export async function serveWorkerMetrics(config: Config, clients: { knex: Knex; redis: ScriptedRedis; logger: Logger; metrics: Metrics }, port: number) {
  const { metrics, logger } = clients;
  const identity = buildIdentityServices({ config, ...clients });
  identity.usage.start();
  const { bullPrefix } = identity.keys;
  const queues = [RUN_QUEUE, INGEST_QUEUE, WEBHOOK_QUEUE].map((name) => producerQueue(name, clients.redis, bullPrefix(name)));
  const counts = new QueueStats(queues, QUEUE_COUNTS_TTL_MS);
  metrics.watch({ queueCounts: () => counts.counts() });
  const server = createServer(metricsApp(metrics, scrapeGuard(config.metrics.token, identity.authenticator), identity.authenticator, logger).callback());
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, () => resolve()));
  logger.info({ metrics_port: (server.address() as AddressInfo).port }, 'worker metrics listening');
  return {
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await identity.usage.stop();
      await Promise.all(queues.map((queue) => queue.close()));
    },
  };
}
