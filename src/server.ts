#!/usr/bin/env node
import { loadConfigOrExit } from './config.js';
import { createLogger } from './logger.js';
import { createKnex } from './db/knex.js';
import { createRedis } from './redis/connection.js';
import { buildServices } from './services.js';
import { createApp } from './app.js';
import { onShutdown } from './shutdown.js';

const config = loadConfigOrExit();
const logger = createLogger(config.logLevel, 'web');
for (const warning of config.warnings) logger.warn(warning);

const knex = createKnex(config.databaseUrl);
const redis = createRedis(config.redis, 'web-commands', 'web');
const subscriber = createRedis(config.redis, 'patient', 'web-subscriber');
const services = buildServices({ config, knex, redis, logger });
services.usage.start();
services.cache.listen(subscriber).catch((err) => logger.error({ err }, 'could not subscribe to credential invalidations'));

const server = createApp(services).listen(config.port, () => logger.info({ port: config.port }, 'web listening'));

onShutdown(logger, async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await services.usage.stop();
  subscriber.disconnect();
  redis.disconnect();
  await knex.destroy();
});
