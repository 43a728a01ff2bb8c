#!/usr/bin/env node
import { loadConfigOrExit } from './config.js';
import { createLogger, prettyDestination } from './logger.js';
import { Metrics } from './metrics/registry.js';
import { createKnex, WEB_POOL } from './db/knex.js';
import { createRedis, waitForReady } from './redis/connection.js';
import { buildServices } from './services.js';
import { createApp } from './app.js';
import { serve } from './http/serve.js';
import { onShutdown } from './shutdown.js';
import { CpuPool } from './cpu/pool.js';

/** How long a booting web waits for Redis and Postgres before it listens anyway. */
const BOOT_WAIT_MS = 5000;

const config = loadConfigOrExit();
const logger = createLogger(config.logLevel, 'web', config.logFormat === 'pretty' ? prettyDestination() : undefined);
for (const warning of config.warnings) logger.warn(warning);
// Traces (DESIGN §18): the SDK is loaded and started only when an OTLP endpoint is configured.
const tracing = config.tracing ? (await import('./telemetry/tracing.js')).startTracing(config.tracing, 'web', logger) : undefined;

const knex = createKnex(config.databaseUrl, { ...WEB_POOL, poolMax: config.databasePoolMax.web });
const redis = createRedis(config.redis, 'web-commands', 'web');
const subscriber = createRedis(config.redis, 'subscriber', 'web-subscriber');
const reader = createRedis(config.redis, 'stream-reader', 'web-reader');
// DESIGN §21: token counting of long histories and parsing of large bodies run on these threads, off the event loop.
const cpu = new CpuPool(config.cpuPool);
const services = buildServices({ config, knex, redis, subscriber, reader, logger, metrics: new Metrics(config.metrics.enabled), cpu });
services.usage.start();
services.knowledgeParts.vectors.path().then(
  (path) => logger.info({ vector_search: path }, path === 'pgvector' ? 'semantic search: pgvector (HNSW for large knowledge bases)' : 'semantic search: exact scan (pgvector is not installed)'),
  (err: unknown) => logger.warn({ err }, 'could not tell whether pgvector is installed; will ask again on the first search'),
);
services.cache.listen(subscriber).catch((err) => logger.error({ err }, 'could not subscribe to credential invalidations'));

// The web listens once its connections are up: a request that arrives while Redis still connects fails fast (the
// web's connection queues nothing) and a cold Postgres pool connects under the request's budget, so a web booting on a
// busy machine answered its first clients 503 or 429. Bounded: a store that stays down does not keep the web from
// serving /healthz and /readyz (which say so).
await Promise.allSettled([waitForReady(redis, BOOT_WAIT_MS), waitForReady(reader, BOOT_WAIT_MS), knex.raw('select 1')]).then((outcomes) => {
  if (outcomes.some((outcome) => outcome.status === 'rejected')) logger.warn('Redis or Postgres is not ready yet; serving anyway (/readyz says which)');
});

const server = serve(createApp(services), config.port).once('listening', () => {
  const address = server.address();
  logger.info({ port: typeof address === 'object' && address ? address.port : config.port }, 'web listening');
});

onShutdown(logger, async () => {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Open streams end cleanly; clients resume elsewhere with Last-Event-ID.
  for (const stream of services.openStreams) stream.close();
  // Keep-alive connections turn idle as their last response ends; close each as it does.
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  server.closeIdleConnections();
  await closed;
  clearInterval(sweep);
  await services.usage.stop();
  await cpu.close();
  await Promise.all(services.queues.map((queue) => queue.close()));
  subscriber.disconnect();
  reader.disconnect();
  redis.disconnect();
  await knex.destroy();
  // Every request has ended: its span goes out with the last batch.
  await tracing?.shutdown();
}, config.shutdownTimeoutMs);
