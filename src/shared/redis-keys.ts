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
    /** A run's event stream: the record of everything it published. */
    runEvents: (runId: string) => `${prefix}run:${runId}:events`,
    /** A run's pub/sub channel: only a doorbell saying "new entries in the stream". */
    runDoorbell: (runId: string) => `${prefix}run:${runId}:bell`,
    /** Holds the id of the conversation's active run (queued or running). */
    conversationActive: (conversationId: string) => `${prefix}conv:${conversationId}:active`,
    /** Injected messages waiting for the running loop's next breakpoint. */
    conversationInjects: (conversationId: string) => `${prefix}conv:${conversationId}:injects`,
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
  /** Appends an event and rings the run's doorbell in one step; expires the stream when it is final. */
  publishEvent: {
    numberOfKeys: 1,
    lua: `
      local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'type', ARGV[2], 'data', ARGV[3])
      if tonumber(ARGV[5]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[5]) end
      redis.call('PUBLISH', ARGV[4], id)
      return id
    `,
  },
  /**
   * Marks the conversation active for this run unless another run holds it and, when claimed,
   * appends the run's first event (one round trip on the request path). Returns the entry id, or nil.
   */
  claimConversation: {
    numberOfKeys: 2,
    lua: `
      if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return false end
      local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'type', ARGV[4], 'data', ARGV[5])
      redis.call('PUBLISH', ARGV[6], id)
      return id
    `,
  },
  /** Queues an injected message only while the conversation has an active run; returns that run's id, or nil. */
  injectIfActive: {
    numberOfKeys: 2,
    lua: `
      local runId = redis.call('GET', KEYS[1])
      if not runId then return false end
      redis.call('RPUSH', KEYS[2], ARGV[1])
      redis.call('EXPIRE', KEYS[2], ARGV[2])
      return runId
    `,
  },
  /** Takes every queued inject at once. */
  drainInjects: {
    numberOfKeys: 1,
    lua: `
      local items = redis.call('LRANGE', KEYS[1], 0, -1)
      redis.call('DEL', KEYS[1])
      return items
    `,
  },
  /** Ends the run's hold on the conversation only if no inject is waiting; 1 when finished. */
  finishIfNoInjects: {
    numberOfKeys: 2,
    lua: `
      if redis.call('LLEN', KEYS[1]) > 0 then return 0 end
      if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
      return 1
    `,
  },
  /** Keeps the active marker alive while its run is alive (the TTL frees it if the run dies). */
  refreshActive: {
    numberOfKeys: 1,
    lua: `
      if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('EXPIRE', KEYS[1], ARGV[2]) end
      return 0
    `,
  },
  /** Frees the conversation if this run still holds it (failure paths). */
  releaseConversation: {
    numberOfKeys: 1,
    lua: `
      if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
      return 0
    `,
  },
} as const;

export interface ScriptCommands {
  incrementWindow(key: string, windowSeconds: number): Promise<[number, number]>;
  publishEvent(stream: string, maxLength: number, type: string, data: string, channel: string, expireSeconds: number): Promise<string>;
  claimConversation(activeKey: string, stream: string, runId: string, ttlSeconds: number, maxLength: number, type: string, data: string, channel: string): Promise<string | null>;
  injectIfActive(activeKey: string, injectsKey: string, payload: string, ttlSeconds: number): Promise<string | null>;
  drainInjects(injectsKey: string): Promise<string[]>;
  finishIfNoInjects(injectsKey: string, activeKey: string, runId: string): Promise<number>;
  refreshActive(activeKey: string, runId: string, ttlSeconds: number): Promise<number>;
  releaseConversation(activeKey: string, runId: string): Promise<number>;
}

/** How long a run's stream is kept after `done`, and how long an active marker lives without a refresh. */
export const STREAM_TTL_AFTER_DONE_SECONDS = 3600;
export const STREAM_MAX_LENGTH = 20_000;
export const ACTIVE_MARKER_TTL_SECONDS = 600;

/** An injected message as it travels through the conversation's list. */
export interface InjectPayload {
  message_id: string;
  content: string;
}
export type ScriptedRedis = Redis & ScriptCommands;

/** Deletes every key under a prefix (teardown of a test run or benchmark). */
export async function deleteKeysWithPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/** Registers the scripts on a connection (EVALSHA with automatic fallback to EVAL). */
export function withScripts(redis: Redis): ScriptedRedis {
  for (const [name, { numberOfKeys, lua }] of Object.entries(scripts)) {
    redis.defineCommand(name, { numberOfKeys, lua });
  }
  return redis as ScriptedRedis;
}
