import { readdirSync, readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';

/**
 * The Lua scripts, one file each in ./lua named `<command>-<number of keys>.lua` (as BullMQ does),
 * with a header naming its KEYS, ARGV and return values. Each becomes a command on the connection
 * (EVALSHA with automatic fallback to EVAL).
 */
const LUA_DIR = new URL('./lua/', import.meta.url);
const FILE_NAME = /^([A-Za-z]+)-(\d+)\.lua$/;

export interface ScriptDefinition {
  name: string;
  numberOfKeys: number;
  lua: string;
}

let loaded: ScriptDefinition[] | undefined;

export function scriptDefinitions(): ScriptDefinition[] {
  loaded ??= readdirSync(LUA_DIR).flatMap((file) => {
    const match = FILE_NAME.exec(file);
    if (!match) return [];
    return [{ name: match[1]!, numberOfKeys: Number(match[2]), lua: readFileSync(new URL(file, LUA_DIR), 'utf8') }];
  });
  return loaded;
}

export interface ScriptCommands {
  incrementWindow(key: string, windowSeconds: number): Promise<[number, number]>;
  rateLimit(key: string, limit: number, periodMs: number, wanted: number): Promise<[number, number, number, number]>;
  reserveBudgets(firstCounter: string, secondCounter: string, firstHeld: string, secondHeld: string, member: string, tokens: number, ttlMs: number, firstLimit: number, secondLimit: number, firstExpiry: number, secondExpiry: number): Promise<[number, number]>;
  settleBudgets(firstCounter: string, secondCounter: string, firstHeld: string, secondHeld: string, member: string, held: number, used: number, firstLimit: number, secondLimit: number, firstExpiry: number, secondExpiry: number): Promise<number>;
  publishEvents(stream: string, sequence: string, maxLength: number, channel: string, owner: string, finalTtlSeconds: number, publishCommand: string, ...events: (string | number)[]): Promise<number>;
  claimConversation(activeKey: string, stream: string, userRuns: string, queueKey: string, userParkable: string, runId: string, ttlSeconds: number, maxLength: number, type: string, data: string, channel: string, userLimit: number, publishCommand: string, strategy: string, queueLimit: number, runKeyPrefix: string, cancelChannel: string, parkedLimit: number, parkableTtlSeconds: number): Promise<[string, string, string]>;
  injectIfActive(activeKey: string, injectsKey: string, payload: string, ttlSeconds: number): Promise<string | null>;
  requestCancel(activeKey: string, cancelKey: string, queueKey: string, runId: string, channel: string, ttlSeconds: number): Promise<number>;
  admitQueued(activeKey: string, queueKey: string, userRuns: string, cancelKey: string, runId: string, ttlSeconds: number): Promise<number>;
  breakpoint(activeKey: string, userRuns: string, cancelKey: string, injectsKey: string, runId: string, ttlSeconds: number): Promise<[number, ...string[]]>;
  acknowledgeInjects(injectsKey: string, count: number): Promise<number>;
  requestApprovals(sequenceKey: string, approvalsKey: string, owner: string, ttlSeconds: number, deadlineMs: number, kind: 'approval' | 'client', nowMs: number, ...callIds: string[]): Promise<string[]>;
  recordToolOutputs(approvalsKey: string, cancelKey: string, ...callIdsAndOutputs: string[]): Promise<[number, string?]>;
  decideApproval(approvalsKey: string, callId: string, decision: string): Promise<number>;
  parkRun(approvalsKey: string, activeKey: string, injectsKey: string, userRuns: string, cancelKey: string, userParkable: string, runId: string, ttlSeconds: number, parkableTtlSeconds: number, mode: 'park' | 'look'): Promise<number>;
  takeAttempt(sequenceKey: string, attempt: number): Promise<number>;
  holdConversation(activeKey: string, queueKey: string, mode: 'hold' | 'release' | 'linger', tombstone: string, seconds: number): Promise<number>;
  finishRun(injectsKey: string, activeKey: string, cancelKey: string, userRuns: string, sequenceKey: string, queueKey: string, approvalsKey: string, userParkable: string, runId: string, honourCancel: 0 | 1, owner: string, ttlSeconds: number): Promise<[number, string]>;
}

/** A connection to a single Redis or to a Redis Cluster (REDIS_CLUSTER_NODES). */
export type RedisClient = Redis | Cluster;
export type ScriptedRedis = RedisClient & ScriptCommands;

/** Registers every script on a connection (EVALSHA, falling back to EVAL on a socket that lacks the script). */
export function withScripts(redis: RedisClient): ScriptedRedis {
  for (const { name, numberOfKeys, lua } of scriptDefinitions()) redis.defineCommand(name, { numberOfKeys, lua });
  return redis as ScriptedRedis;
}

/**
 * ioredis sends a script as EVAL the first time it goes down a socket and as EVALSHA after,
 * falling back to EVAL on NOSCRIPT; but a command that a cluster re-sends after a node restarted
 * loses that fallback and fails with NOSCRIPT (the restarted node has no scripts). Such a call is
 * made once more: by then ioredis knows the socket lacks the script.
 */
export const isNoScript = (err: unknown) => err instanceof Error && err.message.startsWith('NOSCRIPT');
