import { readdirSync, readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';

/**
 * Lua scripts, one file each in a directory, named `<command>-<number of keys>.lua` (as BullMQ
 * does), with a header naming its KEYS, ARGV and return values. Each becomes a command on the
 * connection (EVALSHA with automatic fallback to EVAL). The scripts of ./lua (rate limits, login
 * throttling, token budgets) are on every connection; the run protocol's (src/engine/lua) are
 * added by the engine on the connections it is given.
 */
const FILE_NAME = /^([A-Za-z]+)-(\d+)\.lua$/;
const SHARED_SCRIPTS = new URL('./lua/', import.meta.url);

export interface ScriptDefinition {
  name: string;
  numberOfKeys: number;
  lua: string;
}

const loaded = new Map<string, ScriptDefinition[]>();

/** The scripts of a directory (read once). */
export function scriptDefinitions(directory: URL): ScriptDefinition[] {
  let definitions = loaded.get(directory.href);
  if (!definitions) {
    definitions = readdirSync(directory).flatMap((file) => {
      const match = FILE_NAME.exec(file);
      if (!match) return [];
      return [{ name: match[1]!, numberOfKeys: Number(match[2]), lua: readFileSync(new URL(file, directory), 'utf8') }];
    });
    loaded.set(directory.href, definitions);
  }
  return definitions;
}

export interface ScriptCommands {
  incrementWindow(key: string, windowSeconds: number): Promise<[number, number]>;
  rateLimit(key: string, limit: number, periodMs: number, wanted: number): Promise<[number, number, number, number]>;
  reserveBudgets(firstCounter: string, secondCounter: string, firstHeld: string, secondHeld: string, member: string, tokens: number, ttlMs: number, firstLimit: number, secondLimit: number, firstExpiry: number, secondExpiry: number): Promise<[number, number]>;
  settleBudgets(firstCounter: string, secondCounter: string, firstHeld: string, secondHeld: string, member: string, held: number, used: number, firstLimit: number, secondLimit: number, firstExpiry: number, secondExpiry: number): Promise<number>;
}

/** A connection to a single Redis or to a Redis Cluster (REDIS_CLUSTER_NODES). */
export type RedisClient = Redis | Cluster;
export type ScriptedRedis = RedisClient & ScriptCommands;

/** Registers a directory's scripts on a connection (EVALSHA, falling back to EVAL on a socket that lacks the script); `Commands` types them. */
export function defineScripts<Commands>(redis: RedisClient, directory: URL): RedisClient & Commands {
  for (const { name, numberOfKeys, lua } of scriptDefinitions(directory)) redis.defineCommand(name, { numberOfKeys, lua });
  return redis as RedisClient & Commands;
}

/** Registers the scripts of ./lua on a connection. */
export const withScripts = (redis: RedisClient): ScriptedRedis => defineScripts<ScriptCommands>(redis, SHARED_SCRIPTS);

/**
 * ioredis sends a script as EVAL the first time it goes down a socket and as EVALSHA after,
 * falling back to EVAL on NOSCRIPT; but a command that a cluster re-sends after a node restarted
 * loses that fallback and fails with NOSCRIPT (the restarted node has no scripts). Such a call is
 * made once more: by then ioredis knows the socket lacks the script.
 */
export const isNoScript = (err: unknown) => err instanceof Error && err.message.startsWith('NOSCRIPT');
