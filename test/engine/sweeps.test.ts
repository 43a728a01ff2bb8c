import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { EVAL_QUEUE, type EvalJob } from '../../src/shared/jobs.js';
import { createLogger } from '../../src/logger.js';
import type { RunRef } from '../../src/engine/protocol-types.js';
import { startWakeSweep, type WakeSweep } from '../../workers/runs/wake-sweep.js';
import { startUnqueuedSweep, type UnqueuedSweep } from '../../workers/runs/unqueued-sweep.js';
import { WebEngine } from '../../src/engine/web-engine.js';
import { evalSweep } from '../../workers/evals/sweep.js';
import { createEngine, startRun, type Engine } from './harness.js';

/**
 * The workers' sweeps walk every row across their calls (a keyset cursor that starts over after
 * the last), not the same first batch each time: with a batch of 2, the fifth parked run and the
 * fifth active eval are looked at by the third sweep, and the first ones again by the fourth.
 */
const BATCH = 2;
const COUNT = 5;
const HOUR = 3_600_000;
let engine: Engine;
beforeAll(async () => {
  engine = await createEngine();
});
afterAll(() => engine?.close());

describe('the sweep for parked runs', () => {
  let sweep: WakeSweep;
  afterAll(() => sweep?.close());

  /** Runs parked for approval, in id order, each with its job asleep until its deadline. */
  async function parkedRuns(): Promise<RunRef[]> {
    const refs = await Promise.all(Array.from({ length: COUNT }, async () => (await startRun(engine)).ref));
    await engine.knex('runs').whereIn('id', refs.map((ref) => ref.id)).update({ status: 'waiting' });
    for (const ref of refs) await engine.queue.add('run', { runId: ref.id, conversationId: ref.conversationId, userId: ref.userId }, { jobId: ref.id, delay: HOUR });
    return refs.sort((a, b) => a.id.localeCompare(b.id));
  }

  it('reaches the runs beyond its first batch, then starts again from the first', async () => {
    const refs = await parkedRuns();
    sweep = startWakeSweep(engine.knex, engine.worker.signals, engine.queue, createLogger('silent', 'test'), { batch: BATCH });
    const last = refs.at(-1)!;
    // Cancelled while parked, and its wake lost: only the sweep wakes it.
    expect(await engine.web.signals.cancel(last)).toBe('active');
    expect(await sweep.sweep()).toBe(BATCH);
    expect(await sweep.sweep()).toBe(BATCH);
    expect(await engine.queue.getJobState(last.id)).toBe('delayed');
    expect(await sweep.sweep()).toBe(1);
    expect(await engine.queue.getJobState(last.id)).toBe('waiting');

    const first = refs[0]!;
    expect(await engine.web.signals.cancel(first)).toBe('active');
    expect(await sweep.sweep()).toBe(BATCH);
    expect(await engine.queue.getJobState(first.id)).toBe('waiting');
  });
});

describe('the sweep for runs left queued without a job', () => {
  let sweep: UnqueuedSweep;
  afterAll(() => sweep?.close());

  it('ends them as enqueue_failed (claim undone, stream discarded), beyond its first batch; a run waiting behind another (a delayed job) or queued just now is left alone', async () => {
    const left = await Promise.all(Array.from({ length: COUNT }, async () => (await startRun(engine)).ref));
    await engine.knex('runs').whereIn('id', left.map((ref) => ref.id)).update({ created_at: new Date(Date.now() - HOUR) });
    // A run queued behind the first one: its job is delayed until the first hands the conversation over.
    const behind = (await startRun(engine, { conversationId: left[0]!.conversationId, strategy: 'enqueue' })).ref;
    await engine.queue.add('run', { runId: behind.id, conversationId: behind.conversationId, userId: behind.userId, queued: true }, { jobId: behind.id, delay: HOUR });
    await engine.knex('runs').where({ id: behind.id }).update({ created_at: new Date(Date.now() - HOUR) });
    const recent = (await startRun(engine)).ref;
    sweep = startUnqueuedSweep(engine.knex, new WebEngine(engine.store, engine.web, engine.queue), createLogger('silent', 'test'), { batch: BATCH, afterMs: 60_000 });

    let ended = 0;
    for (let pass = 0; pass < 3; pass++) ended += await sweep.sweep();
    expect(ended).toBe(COUNT);
    const statuses = await engine.knex('runs').whereIn('id', [...left, behind, recent].map((ref) => ref.id)).select('id', 'status', 'error');
    const statusOf = (id: string) => statuses.find((row) => row.id === id)!;
    for (const ref of left) expect(statusOf(ref.id)).toMatchObject({ status: 'failed', error: { code: 'enqueue_failed' } });
    expect(statusOf(behind.id).status).toBe('queued');
    expect(statusOf(recent.id).status).toBe('queued');
    // The first run's hold went to the run behind it; the others' conversations are free and their streams gone.
    expect(await engine.redis.get(engine.keys.conversationActive(engine.userId, left[0]!.conversationId))).toBe(behind.id);
    expect(await engine.redis.get(engine.keys.conversationActive(engine.userId, left[1]!.conversationId))).toBeNull();
    expect(await engine.redis.exists(engine.keys.runEvents(left[1]!))).toBe(0);
    expect(await engine.queue.getJobState(behind.id)).toBe('waiting');
  });
});

describe('the sweep for active evals', () => {
  let queue: Queue<EvalJob>;
  beforeAll(() => {
    queue = new Queue<EvalJob>(EVAL_QUEUE, { connection: engine.redis, prefix: engine.keys.bullPrefix(EVAL_QUEUE) });
  });
  afterAll(() => queue?.close());

  it('queues again every active eval whose job is gone, beyond its first batch, then starts again from the first', async () => {
    const rows = Array.from({ length: COUNT }, () => ({ user_id: engine.userId, dataset_id: engine.userId, agent_id: engine.userId, agent_version: 1, mode: 'react', scorers: '[]', concurrency: 1, total: 1 }));
    const ids = ((await engine.knex('evals').insert(rows).returning('id')) as { id: string }[]).map((row) => row.id).sort();
    const sweep = evalSweep(engine.knex, queue, { batch: BATCH });
    const queued = async () => (await Promise.all(ids.map((id) => queue.getJob(id)))).map((job) => job !== undefined);
    for (let i = 0; i < 3; i++) await sweep();
    expect(await queued()).toEqual(Array(COUNT).fill(true));

    // The first eval's job is lost: the next sweep starts from the first again.
    await queue.remove(ids[0]!);
    expect(await sweep()).toBe(BATCH);
    expect(await queue.getJob(ids[0]!)).toBeDefined();
  });
});
