import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * The one module that owns Redis key names and Lua scripts. Every key carries the configured
 * prefix (REDIS_KEY_PREFIX), so test runs and deployments sharing a Redis never collide.
 */

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

export function redisKeys(prefix: string) {
  return {
    prefix,
    /** BullMQ's own prefix for its queue keys. */
    bullPrefix: `${prefix}bull`,
    loginFailuresForAccount: (email: string) => `${prefix}auth:fail:account:${digest(email.toLowerCase())}`,
    loginFailuresForAddress: (address: string) => `${prefix}auth:fail:address:${digest(address)}`,
    /** Pub/sub channel telling every web process to drop cached credentials. */
    authInvalidationChannel: `${prefix}auth:invalidate`,
  };
}
export type RedisKeys = ReturnType<typeof redisKeys>;

const scripts = {
  /** INCR with a TTL set on first increment; returns [count, ttl seconds]. */
  incrementWindow: {
    numberOfKeys: 1,
    lua: `
      local count = redis.call('INCR', KEYS[1])
      if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
      return {count, redis.call('TTL', KEYS[1])}
    `,
  },
} as const;

export interface ScriptCommands {
  incrementWindow(key: string, windowSeconds: number): Promise<[number, number]>;
}
export type ScriptedRedis = Redis & ScriptCommands;

/** Registers the scripts on a connection (EVALSHA with automatic fallback to EVAL). */
export function withScripts(redis: Redis): ScriptedRedis {
  for (const [name, { numberOfKeys, lua }] of Object.entries(scripts)) {
    redis.defineCommand(name, { numberOfKeys, lua });
  }
  return redis as ScriptedRedis;
}
