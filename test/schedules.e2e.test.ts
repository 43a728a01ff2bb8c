import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Proc, type Stack } from './support/stack.js';
import { createDatabase } from './support/database.js';
import { eventually } from './support/eventually.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { loadConfig } from '../src/config.js';
import { redisKeys } from '../src/shared/redis-keys.js';
import { SCHEDULE_QUEUE } from '../src/shared/jobs.js';

/**
 * Schedules (DESIGN §19) through built web and worker processes, on a database of their own (a
 * worker's start reconciles every enabled schedule it finds): ticks every second on two workers
 * with one run per tick, skipped and counted while a continued conversation is busy, a run now,
 * webhooks, a worker restart without a pile of catch-up runs, and timers rebuilt after Redis lost them.
 */
let database: Awaited<ReturnType<typeof createDatabase>>;
let stack: Stack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  [database, receiver] = await Promise.all([createDatabase(), WebhookReceiver.start()]);
  stack = await startStack({ workers: 2, env: { DATABASE_URL: database.url, SCHEDULE_MIN_INTERVAL_S: '1' } });
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
  await database?.drop();
});

const api = (key: string, method: string, path: string, body?: unknown) => stack.api(key, method, path, body);

interface TickLine {
  schedule_id: string;
  planned_at: string;
  outcome: string;
  run_id?: string;
}

/** The tick log lines of `scheduleId` that `workers` wrote. */
const tickLines = (workers: Proc[], scheduleId: string): TickLine[] =>
  workers
    .flatMap((worker) => worker.output.join('').split('\n'))
    .filter((line) => line.includes('"msg":"schedule tick"'))
    .map((line) => JSON.parse(line) as TickLine)
    .filter((line) => line.schedule_id === scheduleId);

const startedTicks = (workers: Proc[], scheduleId: string) => tickLines(workers, scheduleId).filter((line) => line.outcome === 'started');

async function createSchedule(key: string, body: Record<string, unknown>): Promise<{ id: string }> {
  const created = await api(key, 'POST', '/api/schedules', body);
  expect(created.status).toBe(201);
  return created.body;
}

const runsOf = async (key: string, scheduleId: string) => (await api(key, 'GET', `/api/schedules/${scheduleId}/runs?size=100`)).body as { total: number; items: { id: string; schedule_id: string; status: string }[] };
const untilRuns = (key: string, scheduleId: string, count: number) => eventually(async () => (await runsOf(key, scheduleId)).total >= count, `${count} runs of schedule ${scheduleId}`);
const switchOff = (key: string, scheduleId: string) => api(key, 'PATCH', `/api/schedules/${scheduleId}`, { enabled: false });

describe('ticks', () => {
  it('every_seconds: 1 on two workers: one run per tick, none twice, each carrying schedule_id (also in the admin view)', async () => {
    const { key, user } = await stack.user();
    const schedule = await createSchedule(key, { q: 'What is 2+2?', every_seconds: 1 });
    await untilRuns(key, schedule.id, 5);
    await switchOff(key, schedule.id);
    // The record of every run and the worker's line of every tick that started one agree, whichever worker took it.
    const runs = await eventually(async () => {
      const page = await runsOf(key, schedule.id);
      const started = startedTicks(stack.workers, schedule.id);
      return started.length === page.total && { page, started };
    }, 'a tick line per run');
    expect(runs.started.map((line) => line.run_id).sort()).toEqual(runs.page.items.map((run) => run.id).sort());
    const planned = runs.started.map((line) => Date.parse(line.planned_at)).sort((a, b) => a - b);
    expect(new Set(planned).size).toBe(planned.length);
    for (let i = 1; i < planned.length; i++) expect((planned[i]! - planned[i - 1]!) % 1000).toBe(0);
    expect(runs.page.items.every((run) => run.schedule_id === schedule.id)).toBe(true);
    const first = await api(key, 'GET', `/api/runs/${runs.page.items.at(-1)!.id}?wait=30`);
    expect(first.body).toMatchObject({ status: 'succeeded', schedule_id: schedule.id });
    expect(first.body.answer).toContain('4');
    const admin = await stack.user('admin');
    const adminView = await api(admin.key, 'GET', `/api/admin/runs?user_id=${user.id}&size=100`);
    expect(adminView.body.items.every((run: { schedule_id: string }) => run.schedule_id === schedule.id)).toBe(true);
  });

  it('a continued conversation: ticks are skipped and counted while its previous scheduled run is active', async () => {
    const { key } = await stack.user();
    // The agent's calculator calls wait for a person's approval: the run stays active until it is cancelled.
    const agent = (await api(key, 'POST', '/api/agents', { name: 'careful', tool_approval: ['calculator'] })).body;
    const opener = (await api(key, 'POST', '/api/runs', { mode: 'react', q: 'hello' })).body;
    await api(key, 'GET', `/api/runs/${opener.run_id}?wait=30`);
    const schedule = await createSchedule(key, { q: 'What is 12*7?', agent_id: agent.id, conversation_id: opener.conversation_id, every_seconds: 1 });
    await untilRuns(key, schedule.id, 1);
    const [active] = (await runsOf(key, schedule.id)).items;
    const skipped = await eventually(async () => {
      const record = (await api(key, 'GET', `/api/schedules/${schedule.id}`)).body;
      return record.skipped_runs >= 2 && record;
    }, 'two skipped ticks');
    expect(skipped).toMatchObject({ last_skip_reason: 'conversation_busy', last_run_id: active!.id, conversation_id: opener.conversation_id });
    expect((await runsOf(key, schedule.id)).total).toBe(1);
    expect(startedTicks(stack.workers, schedule.id)).toHaveLength(1);
    // Once the run is over, the next tick continues the conversation.
    expect((await api(key, 'POST', `/api/runs/${active!.id}/cancel`)).status).toBe(202);
    await untilRuns(key, schedule.id, 2);
    await switchOff(key, schedule.id);
    const [latest] = (await runsOf(key, schedule.id)).items;
    expect((await api(key, 'GET', `/api/runs/${latest!.id}`)).body.conversation_id).toBe(opener.conversation_id);
    await api(key, 'POST', `/api/runs/${latest!.id}/cancel`);
  });

  it('POST …/trigger runs now (202, as POST /api/runs); GET …/runs lists it, newest first', async () => {
    const { key } = await stack.user();
    const schedule = await createSchedule(key, { q: 'What is 6*7?', cron: '0 0 1 1 *', timezone: 'Pacific/Auckland' });
    const triggered = await api(key, 'POST', `/api/schedules/${schedule.id}/trigger`);
    expect(triggered.status).toBe(202);
    expect(triggered.body).toEqual({ run_id: expect.any(String), conversation_id: expect.any(String), status: 'queued' });
    const run = await api(key, 'GET', `/api/runs/${triggered.body.run_id}?wait=30`);
    expect(run.body).toMatchObject({ status: 'succeeded', schedule_id: schedule.id });
    expect(run.body.answer).toContain('42');
    const again = await api(key, 'POST', `/api/schedules/${schedule.id}/trigger`);
    const runs = await runsOf(key, schedule.id);
    expect(runs.items.map((r) => r.id)).toEqual([again.body.run_id, triggered.body.run_id]);
  });

  it('a scheduled run fires webhooks like any background run', async () => {
    const { key } = await stack.user();
    expect((await api(key, 'POST', '/api/webhooks', { url: `${receiver.url}/scheduled`, events: ['run.succeeded'] })).status).toBe(201);
    const schedule = await createSchedule(key, { q: 'What is 2+2?', every_seconds: 1 });
    const [delivery] = await receiver.waitFor('/scheduled', 1);
    await switchOff(key, schedule.id);
    const payload = JSON.parse(delivery!.body);
    expect(payload).toMatchObject({ type: 'run.succeeded', data: { status: 'succeeded' } });
    expect((await api(key, 'GET', `/api/runs/${payload.data.run_id}`)).body.schedule_id).toBe(schedule.id);
  });
});

describe('workers come and go', () => {
  it('a worker restart keeps the schedule firing, with at most one catch-up run for the ticks missed', async () => {
    const { key } = await stack.user();
    const schedule = await createSchedule(key, { q: 'hello', every_seconds: 1 });
    await untilRuns(key, schedule.id, 2);
    await Promise.all(stack.workers.map((worker) => worker.stop()));
    const before = (await runsOf(key, schedule.id)).total;
    // An outage of at least three ticks.
    await eventually(async () => {
      const { next_run_at: next } = (await api(key, 'GET', `/api/schedules/${schedule.id}`)).body;
      return Date.now() - Date.parse(next) > 3000;
    }, 'three missed ticks', { everyMs: 200 });
    const restartedAt = Date.now();
    const restarted = await stack.startWorker();
    await eventually(async () => startedTicks([restarted], schedule.id).length >= 3, 'three ticks after the restart');
    await switchOff(key, schedule.id);
    const afterRestart = tickLines([restarted], schedule.id);
    expect(afterRestart.filter((line) => Date.parse(line.planned_at) < restartedAt).length).toBeLessThanOrEqual(1);
    const total = (await runsOf(key, schedule.id)).total;
    expect(total - before).toBe(startedTicks([restarted], schedule.id).length);
  });

  it('timers Redis lost are registered again from Postgres when a worker starts', async () => {
    const { key } = await stack.user();
    const schedule = await createSchedule(key, { q: 'hello', every_seconds: 1 });
    const keys = redisKeys(loadConfig(stack.env).redis);
    const queue = new Queue(SCHEDULE_QUEUE, { connection: stack.redis, prefix: keys.bullPrefix(SCHEDULE_QUEUE) });
    try {
      await Promise.all(stack.workers.map((worker) => worker.stop()));
      await queue.removeJobScheduler(schedule.id);
      const before = (await runsOf(key, schedule.id)).total;
      const worker = await stack.startWorker();
      await worker.waitFor(/"registered":1,"removed":\d+,"msg":"schedule timers reconciled with Postgres"/);
      await untilRuns(key, schedule.id, before + 1);
      await switchOff(key, schedule.id);
    } finally {
      await queue.close();
    }
  });
});
