import type { Logger } from './logger.js';

/** Runs `close` once on SIGTERM/SIGINT and exits; a close that hangs is cut off after `graceMs` (Heroku allows 30 s). */
export function onShutdown(logger: Logger, close: () => Promise<void>, graceMs = 25_000): void {
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, graceMs);
    timer.unref();
    close().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
