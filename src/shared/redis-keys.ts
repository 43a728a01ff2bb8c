import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
export type { ScriptedRedis } from './redis-scripts.js';

/**
 * The one module that owns Redis key names (the scripts are in ./lua). Every key carries the configured
 * prefix (REDIS_KEY_PREFIX), so test runs and deployments sharing a Redis never collide.
 *
 * On a Redis Cluster (DESIGN §13) every key of a run, its conversation and its user carries the
 * user's hash tag `{u:<user id>}`, so each script touches one slot; BullMQ queues get a tagged
 * prefix each. On a single Redis the names stay as they always were, so a deployment with runs in
 * flight upgrades without moving a key.
 */

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** What a run's keys are built from. */
export interface RunKeyRef {
  id: string;
  userId: string;
}

export interface KeyLayout {
  keyPrefix: string;
  /** Non-empty: the processes talk to a Redis Cluster. */
  clusterNodes: readonly unknown[];
}

export function redisKeys({ keyPrefix: prefix, clusterNodes }: KeyLayout) {
  const cluster = clusterNodes.length > 0;
  /** The prefix of every key a user's runs and conversations own: their hash tag on a cluster. */
  const owned = (userId: string) => (cluster ? `${prefix}{u:${userId}}:` : prefix);
  return {
    prefix,
    cluster,
    /** BullMQ's own prefix for a queue's keys: one tag per queue on a cluster, so queues spread over the nodes. */
    bullPrefix: (queue: string) => (cluster ? `{${prefix}bull:${queue}}` : `${prefix}bull`),
    /** How the scripts ring doorbells: sharded pub/sub on a cluster, so a message only travels within its shard. */
    doorbellCommand: cluster ? 'SPUBLISH' : 'PUBLISH',
    loginFailuresForAccount: (email: string) => `${prefix}auth:fail:account:${digest(email.toLowerCase())}`,
    loginFailuresForAddress: (address: string) => `${prefix}auth:fail:address:${digest(address)}`,
    loginFailuresForAccountAtAddress: (email: string, address: string) =>
      `${prefix}auth:fail:pair:${digest(`${email.toLowerCase()}\n${address}`)}`,
    /** A one-time ticket into the queue dashboard (src/admin/dashboard-tickets.ts), by its digest: the ticket itself is never stored. */
    dashboardTicket: (ticket: string) => `${prefix}dashboard:ticket:${digest(ticket)}`,
    /** Pub/sub channel telling every web process to drop cached credentials (broadcast, also on a cluster). */
    authInvalidationChannel: `${prefix}auth:invalidate`,
    /** A run's event stream: the record of everything it published. */
    runEvents: (run: RunKeyRef) => `${owned(run.userId)}run:${run.id}:events`,
    /** A run's pub/sub channel: only a doorbell saying "new entries in the stream". */
    runDoorbell: (run: RunKeyRef) => `${owned(run.userId)}run:${run.id}:bell`,
    /** Per event scope, the last sequence number published, and the `owner` attempt allowed to publish. */
    runSequence: (run: RunKeyRef) => `${owned(run.userId)}run:${run.id}:seq`,
    /** Tool calls waiting for a person's approval (DESIGN §11) or a client's output (§23): their answers, deadlines, and which are client calls. */
    runApprovals: (run: RunKeyRef) => `${owned(run.userId)}run:${run.id}:approvals`,
    /** Set when a cancel was accepted; the worker stops at its next breakpoint or aborts at once. */
    runCancel: (run: RunKeyRef) => `${owned(run.userId)}run:${run.id}:cancel`,
    /** Every worker process listens here for cancels of runs it holds (message: run id; broadcast, also on a cluster). */
    cancelChannel: `${prefix}runs:cancel`,
    /** Holds the id of the conversation's active run (queued or running). */
    conversationActive: (userId: string, conversationId: string) => `${owned(userId)}conv:${conversationId}:active`,
    /** Runs waiting for the conversation's active run to end (DESIGN §19), first = next: a list of run ids. */
    conversationQueue: (userId: string, conversationId: string) => `${owned(userId)}conv:${conversationId}:queue`,
    /** What a user's run keys start with (`<prefix><run id>:cancel`…): a script that learns a run id builds its keys from it. */
    runKeyPrefix: (userId: string) => `${owned(userId)}run:`,
    /** Injected messages waiting for the running loop's next breakpoint. */
    conversationInjects: (userId: string, conversationId: string) => `${owned(userId)}conv:${conversationId}:injects`,
    /** A user's active runs (sorted set scored by expiry), for the per-user cap. */
    userActiveRuns: (userId: string) => `${owned(userId)}user:${userId}:runs`,
    /** A user's unfinished runs that carry client tools and so may park (sorted set scored by expiry), for PARKED_RUNS_PER_USER. */
    userParkableRuns: (userId: string) => `${owned(userId)}user:${userId}:parkable`,
    /**
     * One credential's request-rate state (DESIGN §18): its GCRA theoretical arrival time. By API key id, or
     * (a JWT) by user id; the user's hash tag, so a cluster keeps it in one slot.
     */
    rateLimit: (userId: string, credential: 'key' | 'user', id: string) => `${owned(userId)}rate:${credential}:${id}`,
    /** Tokens used in one period of a token budget (DESIGN §18): a user's or one of its keys' (same hash tag: charged together). */
    tokenBudget: (userId: string, scope: 'user' | 'key', id: string, periodStart: string) => `${owned(userId)}budget:${scope}:${id}:${periodStart}`,
    /** The reservations of a token budget's model calls in flight (DESIGN §21): a sorted set of `<call id>:<tokens>` scored by expiry. */
    tokenBudgetHeld: (userId: string, scope: 'user' | 'key', id: string) => `${owned(userId)}budget:${scope}:${id}:held`,
    /**
     * MCP `tools/call` requests in flight (DESIGN §16) of one caller (user and credential) under one JSON-RPC
     * request id: a hash of call → run id, so a `notifications/cancelled` reaching any web process finds the run.
     * `requestId` is the id as JSON (`1` and `"1"` differ); both parts are hashed, so no credential shows in a key name.
     */
    mcpCall: (userId: string, caller: string, requestId: string) => `${owned(userId)}mcp:call:${digest(`${caller}\n${requestId}`)}`,
  };
}
export type RedisKeys = ReturnType<typeof redisKeys>;

/** An injected message as it travels through the conversation's list. */
export interface InjectPayload {
  message_id: string;
  content: string;
}

/**
 * Deletes every key under a prefix (teardown of a test run or benchmark): on a cluster, on each
 * master, one key per command (the keys hash to different slots); BullMQ's tagged keys start with '{'.
 */
export async function deleteKeysWithPrefix(redis: Redis | Cluster, prefix: string): Promise<void> {
  const nodes = redis.isCluster ? (redis as Cluster).nodes('master') : [redis as Redis];
  for (const node of nodes) {
    for (const pattern of [`${prefix}*`, `{${prefix}*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        if (keys.length) await Promise.all(keys.map((key) => node.unlink(key)));
        cursor = next;
      } while (cursor !== '0');
    }
  }
}
