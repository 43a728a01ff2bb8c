import { Redis, type RedisOptions } from 'ioredis';
import type { Config } from '../config.js';
import { withScripts, type ScriptedRedis } from '../shared/redis-keys.js';

/**
 * Connection roles (DESIGN §5): web commands fail fast so an outage answers 503 at once;
 * workers, BullMQ and the shared subscriber wait out an outage instead.
 */
export type RedisRole = 'web-commands' | 'patient';

export function redisOptions(config: Config['redis'], role: RedisRole): RedisOptions {
  const options: RedisOptions = {
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(100 * 2 ** attempt, 2000),
  };
  if (config.url.startsWith('rediss://')) options.tls = { rejectUnauthorized: config.tlsRejectUnauthorized };
  if (role === 'web-commands') {
    options.enableOfflineQueue = false;
    options.maxRetriesPerRequest = 1;
    options.commandTimeout = 2000;
  } else {
    options.maxRetriesPerRequest = null;
  }
  return options;
}

export function createRedis(config: Config['redis'], role: RedisRole, name: string): ScriptedRedis {
  const redis = new Redis(config.url, { ...redisOptions(config, role), connectionName: name });
  // Errors surface through the commands that fail; the 'error' event only needs a listener.
  redis.on('error', () => {});
  return withScripts(redis);
}

/** Resolves once the connection is ready (entry points wait for it before serving). */
export async function waitForReady(redis: Redis, timeoutMs = 10_000): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Redis not ready after ${timeoutMs} ms`)), timeoutMs);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
