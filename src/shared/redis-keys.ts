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
    /** Per event scope, the last sequence number published, and the `owner` attempt allowed to publish. */
    runSequence: (runId: string) => `${prefix}run:${runId}:seq`,
    /** Set when a cancel was accepted; the worker stops at its next breakpoint or aborts at once. */
    runCancel: (runId: string) => `${prefix}run:${runId}:cancel`,
    /** Every worker process listens here for cancels of runs it holds (message: run id). */
    cancelChannel: `${prefix}runs:cancel`,
    /** Holds the id of the conversation's active run (queued or running). */
    conversationActive: (conversationId: string) => `${prefix}conv:${conversationId}:active`,
    /** Injected messages waiting for the running loop's next breakpoint. */
    conversationInjects: (conversationId: string) => `${prefix}conv:${conversationId}:injects`,
    /** A user's active runs (sorted set scored by expiry), for the per-user cap. */
    userActiveRuns: (userId: string) => `${prefix}user:${userId}:runs`,
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
  /**
   * Appends an event and rings the run's doorbell in one step. Fenced: only the current owner
   * attempt may publish (error SUPERSEDED otherwise). Idempotent per (scope, seq): a resumed loop
   * that makes an event again that was already published adds nothing. Expires the run's keys
   * when the event is final.
   */
  publishEvent: {
    numberOfKeys: 2,
    lua: `
      if ARGV[8] ~= '' and redis.call('HGET', KEYS[2], 'owner') ~= ARGV[8] then
        return redis.error_reply('SUPERSEDED')
      end
      if ARGV[6] ~= '' then
        local last = tonumber(redis.call('HGET', KEYS[2], ARGV[6]) or '0')
        if tonumber(ARGV[7]) <= last then return false end
        redis.call('HSET', KEYS[2], ARGV[6], ARGV[7])
      end
      local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'type', ARGV[2], 'data', ARGV[3])
      if tonumber(ARGV[5]) > 0 then
        redis.call('EXPIRE', KEYS[1], ARGV[5])
        redis.call('EXPIRE', KEYS[2], ARGV[5])
      end
      redis.call('PUBLISH', ARGV[4], id)
      return id
    `,
  },
  /**
   * Web: marks the conversation active for a new run and publishes its first event, unless the
   * conversation is busy (returns 0) or the user is at the active-run cap (returns -1).
   */
  claimConversation: {
    numberOfKeys: 3,
    lua: `
      if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
      local now = tonumber(redis.call('TIME')[1])
      redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
      if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[7]) then return -1 end
      redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
      redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[1])
      redis.call('EXPIRE', KEYS[3], ARGV[2])
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
  /** Web: accepts a cancel only while the run holds its conversation (is queued or running); 1 when accepted. */
  requestCancel: {
    numberOfKeys: 2,
    lua: `
      if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
      redis.call('SET', KEYS[2], '1', 'EX', ARGV[3])
      redis.call('PUBLISH', ARGV[2], ARGV[1])
      return 1
    `,
  },
  /** Worker: makes this attempt the only one allowed to publish; returns 1 if a cancel is pending. */
  takeRun: {
    numberOfKeys: 2,
    lua: `
      redis.call('HSET', KEYS[1], 'owner', ARGV[1])
      return redis.call('EXISTS', KEYS[2])
    `,
  },
  /**
   * Worker breakpoint: keeps the run's hold on its conversation and its place under the user's
   * cap alive, and returns {cancel pending (0/1), every waiting inject...} without removing them.
   */
  breakpoint: {
    numberOfKeys: 4,
    lua: `
      if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
      local now = tonumber(redis.call('TIME')[1])
      redis.call('ZADD', KEYS[2], 'XX', now + tonumber(ARGV[2]), ARGV[1])
      redis.call('EXPIRE', KEYS[2], ARGV[2])
      local result = {redis.call('EXISTS', KEYS[3])}
      for _, item in ipairs(redis.call('LRANGE', KEYS[4], 0, -1)) do table.insert(result, item) end
      return result
    `,
  },
  /** Removes the first N injects once they are safely in the checkpoint. */
  acknowledgeInjects: {
    numberOfKeys: 1,
    lua: `
      if tonumber(ARGV[1]) > 0 then redis.call('LTRIM', KEYS[1], ARGV[1], -1) end
      return redis.call('LLEN', KEYS[1])
    `,
  },
  /**
   * Worker: ends the run's hold on its conversation, the one atomic decision point of a run's end.
   * Returns 2 when a cancel is pending (and ARGV[2] = 1: honour it), 0 when an inject is waiting
   * (the loop must answer it), 1 when finished (marker and cap entry released).
   */
  finishRun: {
    numberOfKeys: 4,
    lua: `
      if ARGV[2] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then return 2 end
      if redis.call('LLEN', KEYS[1]) > 0 then return 0 end
      if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
      redis.call('ZREM', KEYS[4], ARGV[1])
      redis.call('DEL', KEYS[3])
      return 1
    `,
  },
} as const;

export interface ScriptCommands {
  incrementWindow(key: string, windowSeconds: number): Promise<[number, number]>;
  publishEvent(stream: string, sequence: string, maxLength: number, type: string, data: string, channel: string, expireSeconds: number, scope: string, seq: number | string, owner: string): Promise<string | null>;
  claimConversation(activeKey: string, stream: string, userRuns: string, runId: string, ttlSeconds: number, maxLength: number, type: string, data: string, channel: string, userLimit: number): Promise<string | number>;
  injectIfActive(activeKey: string, injectsKey: string, payload: string, ttlSeconds: number): Promise<string | null>;
  requestCancel(activeKey: string, cancelKey: string, runId: string, channel: string, ttlSeconds: number): Promise<number>;
  takeRun(sequenceKey: string, cancelKey: string, owner: string): Promise<number>;
  breakpoint(activeKey: string, userRuns: string, cancelKey: string, injectsKey: string, runId: string, ttlSeconds: number): Promise<[number, ...string[]]>;
  acknowledgeInjects(injectsKey: string, count: number): Promise<number>;
  finishRun(injectsKey: string, activeKey: string, cancelKey: string, userRuns: string, runId: string, honourCancel: 0 | 1): Promise<number>;
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
