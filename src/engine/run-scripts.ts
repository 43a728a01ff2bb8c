import { defineScripts, isNoScript, scriptDefinitions, type RedisClient, type ScriptDefinition } from '../shared/redis-scripts.js';
import type { RedisKeys } from '../shared/redis-keys.js';
import { DEFAULT_LEASE, type LeaseOptions, type RunRef } from './protocol-types.js';
import { decodeScriptError } from './script-outcomes.js';

/** The run protocol's Lua scripts (DESIGN §5), one file each in ./lua, `<command>-<number of keys>.lua`. */
const RUN_SCRIPTS = new URL('./lua/', import.meta.url);

export interface RunScriptCommands {
  publishEvents(stream: string, sequence: string, maxLength: number, channel: string, owner: string, finalTtlSeconds: number, publishCommand: string, carriedMaxBytes: number, ...events: (string | number)[]): Promise<number>;
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

/** A connection the run protocol's scripts are registered on. */
export type RunRedis = RedisClient & RunScriptCommands;

/** The run protocol's scripts, as read from ./lua. */
export const runScriptDefinitions = (): ScriptDefinition[] => scriptDefinitions(RUN_SCRIPTS);

/** Registers the run protocol's scripts on a connection (the engine's parts are built on one: src/engine/run-protocol.ts). */
export const withRunScripts = (redis: RedisClient): RunRedis => defineScripts<RunScriptCommands>(redis, RUN_SCRIPTS);

/** Calls a script, once more on NOSCRIPT (see isNoScript); its error replies decoded (SUPERSEDED as Superseded). */
export async function callScript<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call().catch((err: unknown) => (isNoScript(err) ? call() : Promise.reject(err)));
  } catch (err) {
    throw decodeScriptError(err);
  }
}

/** A part of the run protocol (src/engine/run-protocol.ts): its connection, keys and options, and the keys its scripts name for a run. */
export abstract class ProtocolPart {
  constructor(
    protected readonly redis: RunRedis,
    readonly keys: RedisKeys,
    readonly options: LeaseOptions = DEFAULT_LEASE,
  ) {}

  protected keysOf(run: RunRef) {
    return runKeys(this.keys, run);
  }
}

/** The keys the scripts name for a run, its conversation and its user. */
function runKeys(keys: RedisKeys, run: RunRef) {
  return {
    active: keys.conversationActive(run.userId, run.conversationId),
    queue: keys.conversationQueue(run.userId, run.conversationId),
    injects: keys.conversationInjects(run.userId, run.conversationId),
    userRuns: keys.userActiveRuns(run.userId),
    parkable: keys.userParkableRuns(run.userId),
    cancel: keys.runCancel(run),
    sequence: keys.runSequence(run),
    approvals: keys.runApprovals(run),
  };
}
