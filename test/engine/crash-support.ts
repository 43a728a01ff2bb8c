import { randomUUID } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import type { Knex } from 'knex';
import type { Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createKnex } from '../../src/db/knex.js';
import { bindModels, type Models } from '../../src/db/models.js';
import { createRedis, waitForReady } from '../../src/redis/connection.js';
import { deleteKeysWithPrefix, redisKeys, type RedisKeys, type ScriptedRedis } from '../../src/shared/redis-keys.js';
import { RUN_QUEUE, type RunJob } from '../../src/shared/jobs.js';
import { leaseOptions } from '../../src/engine/protocol-types.js';
import { runProtocol } from '../../src/engine/run-protocol.js';
import { RunStore } from '../../src/engine/run-store.js';
import { WorkerEngine } from '../../src/engine/worker-engine.js';
import { WebEngine } from '../../src/engine/web-engine.js';
import type { Write, WritePoint, WritePoints, WriteSide } from '../../src/engine/write-points.js';
import { RunService } from '../../src/runs/service.js';
import { ConversationService } from '../../src/conversations/service.js';
import { AuditLog } from '../../src/audit/log.js';
import { Metrics } from '../../src/metrics/registry.js';
import { BudgetLedger } from '../../src/budgets/ledger.js';
import { workerServices } from '../../workers/runs/assembly.js';
import { RunExecutor, type ExecutionResult } from '../../workers/runs/executor.js';
import { tokensOf } from '../../workers/runs/run-budget.js';
import type { ModelProvider } from '../../workers/models/types.js';
import { WorkerLifecycle } from '../../workers/runs/run-control.js';
import { startWakeSweep } from '../../workers/runs/wake-sweep.js';
import { startUnqueuedSweep } from '../../workers/runs/unqueued-sweep.js';
import { testConfig, uniqueId } from '../support/app.js';
import { createDatabase } from '../support/database.js';

/**
 * The crash harness of DESIGN §28: a web and workers in this process, on a database and key
 * prefix of their own, whose processes can be killed at a write point of the transition table.
 * A killed process does nothing more: its engine throws at every later point, and a worker's
 * own Postgres backends and Redis connection are cut (its open transactions roll back). Recovery
 * is what production does: BullMQ finds the dead worker's job stalled (its lock gone) and gives it
 * to a new attempt; a parked run is woken by the web or the wake sweep.
 */

/** What a killed process throws at the point it dies (and at every later one). */
export class Crash extends Error {
  constructor(readonly point: string) {
    super(`process killed at ${point}`);
  }
}

/** A step of a plan: pass `point` (crash there, or only note it was reached). */
export interface PlanStep {
  point: WritePoint;
  crash: boolean;
}

const matches = (point: WritePoint, write: Write, side: WriteSide) => point.side === side && point.write === write.name && write.events.includes(point.event);
const label = (p: WritePoint) => `${p.event}/${p.write}/${p.side}`;

/**
 * The plan's points, shared by every process of a case: the steps are met in order (a crash step
 * kills the process that reaches it). `crashed` lists what was killed.
 */
export class CrashPlan {
  readonly crashed: string[] = [];
  private next = 0;

  constructor(private readonly steps: PlanStep[]) {}

  /** The points of one process: `kill` cuts its connections. */
  forProcess(kill: () => void): WritePoints & { dead: boolean } {
    const plan = this;
    return {
      dead: false,
      reach(write: Write, side: WriteSide) {
        if (this.dead) throw new Crash('(dead)');
        const step = plan.steps[plan.next];
        if (!step || !matches(step.point, write, side)) return;
        plan.next++;
        if (!step.crash) return;
        this.dead = true;
        plan.crashed.push(label(step.point));
        kill();
        throw new Crash(label(step.point));
      },
    };
  }

  get done(): boolean {
    return this.next >= this.steps.length;
  }
}

const silent = createLogger('silent', 'crash-harness');

/** `provider`, adding the tokens of each call that returns to `spent` (a call cut off returns nothing to count). */
function countingProvider(provider: ModelProvider, spent: { tokens: number }): ModelProvider {
  const counted = async <T extends { usage: Parameters<typeof tokensOf>[0] }>(call: Promise<T>): Promise<T> => {
    const result = await call;
    spent.tokens += Math.ceil(tokensOf(result.usage));
    return result;
  };
  return {
    deterministic: provider.deterministic,
    complete: (request, sink) => counted(provider.complete(request, sink)),
    plan: (request) => counted(provider.plan(request)),
    summarize: (request) => counted(provider.summarize(request)),
  };
}

/** A queue whose calls fail once its process is dead (`failAdds`: every add fails, as when Redis refuses the job). */
function processQueue(queue: Queue<RunJob>, process: { dead: boolean }, faults: { failAdds: boolean }): Queue<RunJob> {
  return new Proxy(queue, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (process.dead) return Promise.reject(new Crash('(dead)'));
        if (property === 'add' && faults.failAdds) return Promise.reject(new Error('the run queue refused the job'));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

export interface Stack {
  config: Config;
  knex: Knex;
  models: Models;
  redis: ScriptedRedis;
  keys: RedisKeys;
  userId: string;
  /** The run queue, as the platform's processes share it. */
  queue: Queue<RunJob>;
  /** A fresh web (its engine and RunService), under `plan`; `failAdds` makes its queue refuse jobs. */
  web(plan: CrashPlan, faults?: { failAdds: boolean }): { service: RunService; engine: WebEngine; dead(): boolean };
  /** Workers take the waiting jobs, one attempt at a time, until none is waiting; killed attempts' jobs stall back. */
  work(plan: CrashPlan, hooks?: WorkHooks): Promise<void>;
  /** The tokens of every model call the workers' attempts made (each call's reported usage, counted as the budget charges it); a case sets it to 0. */
  spent: { tokens: number };
  /** The wake sweep's one pass (parked runs whose answers are all in are woken). */
  sweep(): Promise<number>;
  /** The unqueued sweep's one pass, the test being the clock (runs left queued without a job end `enqueue_failed`); how many it ended. */
  sweepUnqueued(): Promise<number>;
  close(): Promise<void>;
}

export interface WorkHooks {
  /** The first attempt's worker is shutting down: it hands its run back at its first breakpoint. */
  drainFirst?: boolean;
  /** Wraps the memory service's remember (a hold the test releases). */
  onRemember?: () => Promise<void>;
}

export async function createStack(): Promise<Stack> {
  const database = await createDatabase();
  const config = testConfig({ DATABASE_URL: database.url, LOCAL_MODEL_TOKEN_DELAY_MS: '0', LOG_LEVEL: 'silent' });
  const knex = createKnex(database.url, { poolMax: 6 });
  const models = bindModels(knex);
  const keys = redisKeys(config.redis);
  const redis = createRedis(config.redis, 'worker-commands', 'crash-test');
  const patient = createRedis(config.redis, 'patient', 'crash-bullmq');
  await Promise.all([waitForReady(redis), waitForReady(patient)]);
  const queue = new Queue<RunJob>(RUN_QUEUE, { connection: redis, prefix: keys.bullPrefix(RUN_QUEUE) });
  // A worker that takes jobs by hand (no processor): each attempt runs here, and a dead one's job stalls.
  const bull = new Worker<RunJob>(RUN_QUEUE, null, { connection: patient, prefix: keys.bullPrefix(RUN_QUEUE), lockDuration: 60_000, maxStalledCount: 1000, autorun: false });
  await bull.waitUntilReady();
  const [user] = await knex('users').insert({ email: `${uniqueId()}@crash.test`, password_hash: 'unused' }).returning('id');
  const userId = (user as { id: string }).id;
  const sweepEngine = new WorkerEngine(new RunStore(knex, models), runProtocol(redis, keys, leaseOptions(config.runs)), silent);
  const wakeSweep = startWakeSweep(knex, sweepEngine, queue, silent);
  const unqueuedSweep = startUnqueuedSweep(knex, new WebEngine(new RunStore(knex, models), runProtocol(redis, keys, leaseOptions(config.runs)), queue), silent, { afterMs: 0 });
  let attemptNumber = 0;
  const spent = { tokens: 0 };

  /** A worker process for one attempt, on connections of its own. */
  async function workerProcess(plan: CrashPlan, hooks: WorkHooks, draining: boolean) {
    const name = `crash-attempt-${uniqueId()}-${++attemptNumber}`;
    const own = createKnex(`${database.url}${database.url.includes('?') ? '&' : '?'}application_name=${name}`, { poolMax: 4 });
    const ownRedis = createRedis(config.redis, 'worker-commands', name);
    await waitForReady(ownRedis);
    const ownModels = bindModels(own);
    const services = workerServices(config, { knex: own, models: ownModels, redis: ownRedis, logger: silent });
    let destroyed: Promise<unknown> | undefined;
    const kill = () => {
      ownRedis.disconnect();
      destroyed = Promise.all([own.destroy(), knex.raw('select pg_terminate_backend(pid) from pg_stat_activity where application_name = ?', [name])]);
    };
    const points = plan.forProcess(kill);
    const engine = new WorkerEngine(new RunStore(own, ownModels), runProtocol(ownRedis, keys, leaseOptions(config.runs)), silent, points);
    const memories = services.deps.memories;
    const remember = memories.remember.bind(memories);
    const heldMemories = hooks.onRemember ? Object.assign(Object.create(memories) as typeof memories, { remember: async (...args: Parameters<typeof remember>) => (await hooks.onRemember!(), remember(...args)) }) : memories;
    const modelFor = (model: string) => countingProvider(services.deps.modelFor(model), spent);
    const executor = new RunExecutor({ ...services.deps, engine, memories: heldMemories, modelFor });
    const lifecycle = new WorkerLifecycle();
    if (draining) lifecycle.drain();
    return {
      executor,
      points,
      lifecycle,
      async close() {
        if (destroyed) await destroyed.catch(() => {});
        else {
          await services.close();
          ownRedis.disconnect();
          await own.destroy();
        }
      },
    };
  }

  /** A dead worker's job: its lock is gone, and BullMQ's stall check (two passes) moves it back to wait. */
  async function stall(job: Job<RunJob>) {
    const checker = bull as unknown as { moveStalledJobsToWait(): Promise<void>; keys: Record<string, string> };
    await redis.del(`${bull.toKey(job.id!)}:lock`);
    for (let pass = 0; pass < 2; pass++) {
      await redis.del(checker.keys['stalled-check']!);
      await checker.moveStalledJobsToWait();
    }
  }

  async function attempt(job: Job<RunJob>, token: string, plan: CrashPlan, hooks: WorkHooks, draining: boolean) {
    const process = await workerProcess(plan, hooks, draining);
    const cancel = new AbortController();
    try {
      const result = await process.executor.execute({ ...job.data, attempt: job.attemptsStarted, crashes: job.stalledCounter }, cancel, process.lifecycle.controlFor(cancel));
      await conclude(job, token, result, process.executor);
    } catch (err) {
      if (!process.points.dead) throw err;
    } finally {
      await process.close();
    }
    // Killed while its job was active: the job stalls back to wait (killed after delaying it: the job waits out its delay).
    if (process.points.dead && (await job.isActive())) await stall(job);
  }

  /** What workers/start.ts does with an attempt's result; a delay elapses at once where the test is the clock. */
  async function conclude(job: Job<RunJob>, token: string, result: ExecutionResult, executor: RunExecutor) {
    if (result.next === 'end') return void (await job.moveToCompleted(null, token, false));
    if (result.next === 'retry' && result.reason === 'shutdown') return void (await job.moveToWait(token));
    await job.moveToDelayed(result.next === 'retry' ? Date.now() : result.untilMs, token);
    if (result.next === 'retry') return void (await job.promote());
    if (result.next === 'queued' && (!result.recheck || (await executor.admitted(result.ref)))) return void (await job.promote());
    if (result.next === 'wait' && (await executor.parked(result.ref))) await job.promote();
  }

  return {
    config,
    knex,
    models,
    redis,
    keys,
    userId,
    queue,
    spent,
    web(plan, faults = { failAdds: false }) {
      const process = plan.forProcess(() => {});
      const lease = runProtocol(redis, keys, leaseOptions(config.runs));
      const engine = new WebEngine(new RunStore(knex, models), lease, processQueue(queue, process, faults), process);
      const files = { attachable: async () => [], views: async () => [] };
      const service = new RunService(models, new ConversationService(models, files), files, engine, { perUser: 1000 }, new AuditLog(knex), new Metrics(false), new BudgetLedger(redis, keys));
      return { service, engine, dead: () => process.dead };
    },
    async work(plan, hooks = {}) {
      let first = true;
      for (;;) {
        const token = randomUUID();
        const job = (await bull.getNextJob(token, { block: false })) as Job<RunJob> | undefined;
        if (!job) return;
        await attempt(job, token, plan, hooks, first && hooks.drainFirst === true);
        first = false;
      }
    },
    sweep: () => wakeSweep.sweep(),
    sweepUnqueued: () => unqueuedSweep.sweep(),
    async close() {
      wakeSweep.close();
      unqueuedSweep.close();
      await bull.close();
      await queue.close();
      await deleteKeysWithPrefix(redis, config.redis.keyPrefix);
      redis.disconnect();
      patient.disconnect();
      await knex.destroy();
      await database.drop();
    },
  };
}
