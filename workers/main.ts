#!/usr/bin/env node
import { loadConfigOrExit } from '../src/config.js';
import { createLogger, prettyDestination } from '../src/logger.js';
import { Metrics } from '../src/metrics/registry.js';
import { onShutdown } from '../src/shutdown.js';
import { startWorkers } from './start.js';

const config = loadConfigOrExit();
const logger = createLogger(config.logLevel, 'worker', config.logFormat === 'pretty' ? prettyDestination() : undefined);
for (const warning of config.warnings) logger.warn(warning);

try {
  const workers = await startWorkers(config, logger, new Metrics(config.metrics.enabled));
  onShutdown(logger, () => workers.close(), config.shutdownTimeoutMs);
} catch (err) {
  logger.fatal({ err }, (err as Error).message);
  process.exit(1);
}
