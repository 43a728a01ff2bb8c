#!/usr/bin/env node
import { loadConfigOrExit } from '../src/config.js';
import { createLogger, prettyDestination } from '../src/logger.js';
import { Metrics } from '../src/metrics/registry.js';
import { onShutdown } from '../src/shutdown.js';
import { startWorkers } from './start.js';

const config = loadConfigOrExit();
const logger = createLogger(config.logLevel, 'worker', config.logFormat === 'pretty' ? prettyDestination() : undefined);
for (const warning of config.warnings) logger.warn(warning);
// Traces (DESIGN §18): the SDK is loaded and started only when an OTLP endpoint is configured.
const tracing = config.tracing ? (await import('../src/telemetry/tracing.js')).startTracing(config.tracing, 'worker', logger) : undefined;

try {
  const workers = await startWorkers(config, logger, new Metrics(config.metrics.enabled));
  onShutdown(
    logger,
    async () => {
      try {
        await workers.close();
      } finally {
        // The attempts handed back or finished: their spans go out with the last batch.
        await tracing?.shutdown();
      }
    },
    config.shutdownTimeoutMs,
  );
} catch (err) {
  logger.fatal({ err }, (err as Error).message);
  await tracing?.shutdown();
  process.exit(1);
}
