#!/usr/bin/env node
import { loadConfigOrExit } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { onShutdown } from '../src/shutdown.js';
import { startWorkers } from './start.js';

const config = loadConfigOrExit();
const logger = createLogger(config.logLevel, 'worker');
for (const warning of config.warnings) logger.warn(warning);

try {
  const workers = await startWorkers(config, logger);
  onShutdown(logger, () => workers.close(), config.shutdownTimeoutMs);
} catch (err) {
  logger.fatal({ err }, (err as Error).message);
  process.exit(1);
}
