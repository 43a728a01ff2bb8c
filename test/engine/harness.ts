import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { inject } from 'vitest';
import { createKnex } from '../../src/db/knex.js';
import { bindModels, type Models, type Run } from '../../src/db/models.js';
import { createRedis, waitForReady, type RedisRole } from '../../src/redis/connection.js';
import { deleteKeysWithPrefix, redisKeys, type RedisKeys, type ScriptedRedis } from '../../src/shared/redis-keys.js';
import { DEFAULT_LEASE, type Claim, type LeaseOptions, type RunRef } from '../../src/engine/protocol-types.js';
import { runProtocol, type RunProtocol } from '../../src/engine/run-protocol.js';
import { RunStore } from '../../src/engine/run-store.js';
import { emptyUsage } from '../../src/shared/events.js';
import type { MultitaskStrategy } from '../../src/shared/multitask.js';
import { Queue } from 'bullmq';
import { RUN_QUEUE, type RunJob } from '../../src/shared/jobs.js';
import { RunService } from '../../src/runs/service.js';
import { WebEngine } from '../../src/engine/web-engine.js';
import { ConversationService } from '../../src/conversations/service.js';
import { AuditLog } from '../../src/audit/log.js';
import { Metrics } from '../../src/metrics/registry.js';
import { BudgetLedger } from '../../src/budgets/ledger.js';
import { createDatabase } from '../support/database.js';
import { uniqueId } from '../support/app.js';
import { clusterNodes, type RedisMode } from '../support/redis-modes.js';

/**
 * The run engine's two halves built in-process (DESIGN §22): the Postgres record (RunStore) on a
 * database of the file's own, and the Redis side (RunProtocol) under a key prefix of its own, once
 * as the web sees it and once as a worker does (two connections, so races really interleave).
 */
export interface Engine {
  knex: Knex;
  models: Models;
  store: RunStore;
  /** The run protocol on the web tier's connection (claim, inject, cancel, decide, tool outputs). */
  web: RunProtocol;
  /** The run protocol on a worker's connection (take, breakpoint, park, publish, finish, release). */
  worker: RunProtocol;
  keys: RedisKeys;
  redis: ScriptedRedis;
  userId: string;
  /** The web-side RunService over the same store and web lease, for races that go through it (inject's message row, cancel's refusal). */
  service: RunService;
  /** Its run queue (real BullMQ under the engine's prefix); nothing consumes it here. */
  queue: Queue<RunJob>;
  /** Another connection to the engine's Redis in a role of the web or worker (closed with the engine). */
  connect(role: RedisRole): ScriptedRedis;
  close(): Promise<void>;
}

export const USER_LIMIT = 1000;

export const usage = emptyUsage;

/** On the run's single Redis, or on its three-node cluster (every script's keys must share a slot there). */
export async function createEngine(options: Partial<LeaseOptions> = {}, mode: RedisMode = 'single'): Promise<Engine> {
  const database = await createDatabase();
  const knex = createKnex(database.url, { poolMax: 8 });
  const models = bindModels(knex);
  const config = { url: inject('redisUrl'), tlsRejectUnauthorized: false, keyPrefix: `${inject('redisPrefix')}engine:${uniqueId()}:`, clusterNodes: mode === 'cluster' ? clusterNodes(inject('redisClusterNodes')) : [] };
  const keys = redisKeys(config);
  const webRedis = createRedis(config, 'web-commands', 'test-engine-web');
  const workerRedis = createRedis(config, 'worker-commands', 'test-engine-worker');
  // The web's connection queues nothing while it connects (it fails fast, as the web tier must): wait until it is up.
  await Promise.all([waitForReady(webRedis), waitForReady(workerRedis)]);
  const leaseOptions = { ...DEFAULT_LEASE, ...options };
  const store = new RunStore(knex, models);
  const web = runProtocol(webRedis, keys, leaseOptions);
  const queue = new Queue<RunJob>(RUN_QUEUE, { connection: workerRedis, prefix: keys.bullPrefix(RUN_QUEUE) });
  // No images in these runs: the files a run attaches and the conversation's message views are never asked for.
  const files = { attachable: async () => [], views: async () => [] };
  const service = new RunService(models, new ConversationService(models, files), files, new WebEngine(store, web, queue), { perUser: USER_LIMIT }, new AuditLog(knex), new Metrics(false), new BudgetLedger(workerRedis, keys));
  const extra: ScriptedRedis[] = [];
  const [user] = await knex('users').insert({ email: `${uniqueId()}@engine.test`, password_hash: 'unused' }).returning('id');
  return {
    knex,
    models,
    store,
    web,
    service,
    queue,
    worker: runProtocol(workerRedis, keys, leaseOptions),
    keys,
    redis: workerRedis,
    userId: (user as { id: string }).id,
    connect(role) {
      const connection = createRedis(config, role, `test-engine-${role}`);
      extra.push(connection);
      return connection;
    },
    async close() {
      for (const connection of extra) connection.disconnect();
      await queue.close();
      await deleteKeysWithPrefix(workerRedis, config.keyPrefix);
      webRedis.disconnect();
      workerRedis.disconnect();
      await knex.destroy();
      await database.drop();
    },
  };
}

/** A run started as the web starts one: the conversation claimed under `strategy`, then the queued row written. */
export async function startRun(engine: Engine, { conversationId = randomUUID() as string, strategy = 'reject', query = 'question' }: { conversationId?: string; strategy?: MultitaskStrategy; query?: string } = {}): Promise<{ ref: RunRef; claim: Claim; run?: Run }> {
  const ref: RunRef = { id: randomUUID(), conversationId, userId: engine.userId };
  const announced = { run_id: ref.id, conversation_id: conversationId, agent_id: null, mode: 'react' as const, status: 'queued' as const, trace_id: null };
  const claim = await engine.web.admission.claim(ref, announced, USER_LIMIT, strategy);
  if (claim.outcome !== 'claimed' && claim.outcome !== 'queued') return { ref, claim };
  const run = await engine.store.create({ runId: ref.id, userId: ref.userId, conversationId, agentId: null, mode: 'react', query, userMetadata: null, docMode: null, attachments: [] });
  return { ref, claim, run };
}

/**
 * A worker attempt takes the run as the executor does: Redis ownership and the Postgres claim side
 * by side. The Run it works with carries the attempt (every later write is fenced by it).
 */
export async function takeRun(engine: Engine, ref: RunRef, attempt: number, crashes = 0) {
  const [taken, loaded] = await Promise.all([engine.worker.hold.take(ref, attempt), engine.store.load(ref.id, { messages: 100, tokens: 100_000, windows: 1 }, { attempt, crashes })]);
  const run = loaded!.run;
  Object.assign(run, { attempt, crashes });
  return { taken, run, claimed: loaded!.claimed === true };
}

/** A run to completion as a worker's happy path does: the Redis end decided first, then the final row. */
export async function succeed(engine: Engine, run: Run, answer = 'answer') {
  const ending = await engine.worker.admission.finish(refOf(run), String(run.attempt));
  if (ending.outcome !== 'finished') return ending;
  await engine.store.succeed(run, { answer, citations: [], finishReason: 'stop', usage: usage(), durationMs: 1, model: 'local' });
  await engine.worker.hold.forget(refOf(run));
  return ending;
}

export const refOf = (run: Run): RunRef => ({ id: run.id, conversationId: run.conversation_id, userId: run.user_id });

/** The run's row as Postgres has it now. */
export async function rowOf(engine: Engine, runId: string) {
  return (await engine.knex('runs').where({ id: runId }).first()) as Record<string, unknown> & { status: string; attempt: number };
}

/** What Redis says of a run and its conversation: its markers, queue, injects, cap entry and flags. */
export async function markersOf(engine: Engine, ref: RunRef) {
  const { keys, redis } = engine;
  const [active, queue, injects, capScore, cancel, owner, approvals] = await Promise.all([
    redis.get(keys.conversationActive(ref.userId, ref.conversationId)),
    redis.lrange(keys.conversationQueue(ref.userId, ref.conversationId), 0, -1),
    redis.lrange(keys.conversationInjects(ref.userId, ref.conversationId), 0, -1),
    redis.zscore(keys.userActiveRuns(ref.userId), ref.id),
    redis.get(keys.runCancel(ref)),
    redis.hget(keys.runSequence(ref), 'owner'),
    redis.hgetall(keys.runApprovals(ref)),
  ]);
  return { active, queue, injects: injects.map((i) => JSON.parse(i) as { message_id: string; content: string }), counted: capScore !== null, cancel, owner, approvals };
}

/** The run's stream entries' types, oldest first. */
export async function eventTypes(engine: Engine, ref: RunRef): Promise<string[]> {
  const entries = await engine.redis.xrange(engine.keys.runEvents(ref), '-', '+');
  return entries.map(([, fields]) => fields[fields.indexOf('type') + 1]!);
}
