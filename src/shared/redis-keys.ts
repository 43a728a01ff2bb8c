import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
export type { ScriptedRedis } from './redis-scripts.js';

/**
 * The one module that owns Redis key names (the scripts are in ./lua). Every key carries the configured
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
    loginFailuresForAccountAtAddress: (email: string, address: string) =>
      `${prefix}auth:fail:pair:${digest(`${email.toLowerCase()}\n${address}`)}`,
    /** Pub/sub channel telling every web process to drop cached credentials. */
    authInvalidationChannel: `${prefix}auth:invalidate`,
    /** A run's event stream: the record of everything it published. */
    runEvents: (runId: string) => `${prefix}run:${runId}:events`,
    /** A run's pub/sub channel: only a doorbell saying "new entries in the stream". */
    runDoorbell: (runId: string) => `${prefix}run:${runId}:bell`,
    /** Per event scope, the last sequence number published, and the `owner` attempt allowed to publish. */
    runSequence: (runId: string) => `${prefix}run:${runId}:seq`,
    /** Tool calls waiting for a person's approval (DESIGN §11), their decisions, and the deadline. */
    runApprovals: (runId: string) => `${prefix}run:${runId}:approvals`,
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

/** An injected message as it travels through the conversation's list. */
export interface InjectPayload {
  message_id: string;
  content: string;
}

/** Deletes every key under a prefix (teardown of a test run or benchmark). */
export async function deleteKeysWithPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
