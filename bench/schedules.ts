import { multitaskHandoff } from './multitask.js';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { benchEnvironment, percentile, round, spawnProcess, stop } from './support.js';
import { cpuSeconds } from './cpu.js';
import { startRedis } from './capacity.js';
import { SCHEDULE_QUEUE, type ScheduleTick } from '../src/shared/jobs.js';
import { TickScheduler } from '../src/schedules/scheduler.js';
import type { Timing } from '../src/schedules/timing.js';

/**
 * Schedules (DESIGN §19), on a redis-server of the bench's own (so INFO counts only its keys).
 *
 * Part 1, timers at scale: 10,000 idle schedules (a yearly cron) registered — rows inserted in bulk,
 * BullMQ job schedulers upserted in pipelined batches — then 100 more firing every second. Redis
 * memory per schedule (INFO used_memory around registering the idle ones); one worker process's CPU
 * per idle minute with the 10,000 idle timers against the same worker with none, measured before
 * them; and tick lateness p50/p99 of the 100 firing ones against each tick's planned instant
 * (BullMQ's job id), when the worker takes the tick and when its run is queued (the tick's log line).
 *
 * Part 2, multitask enqueue handoff: added separately.
 */
const SCHEDULES = 10_000;
const FIRING = 100;
const IDLE_CRON = '0 0 1 1 *';
const INSERT_CHUNK = 1000;
const REGISTER_BATCH = 1000;
const CPU_WINDOW_MS = 30_000;
const SETTLE_MS = 3000;
/** A worker just started is still compiling and connecting: its idle minute is measured after this. */
const WORKER_WARM_UP_MS = 25_000;
const LATENESS_WINDOW_MS = 30_000;

type Bench = Awaited<ReturnType<typeof benchEnvironment>>;

interface TickLine {
  msg: string;
  time: number;
  planned_at: string;
  lateness_ms: number;
  /** How long the tick took, from taken to its run queued and recorded. */
  ms: number;
  outcome: string;
}

/** The worker's `schedule tick` lines as they arrive (stdout chunks may split lines). */
function tickLines(worker: ChildProcess): TickLine[] {
  const lines: TickLine[] = [];
  let rest = '';
  worker.stdout!.on('data', (chunk: Buffer) => {
    const text = rest + chunk.toString();
    const complete = text.split('\n');
    rest = complete.pop() ?? '';
    for (const line of complete) if (line.includes('"msg":"schedule tick"')) lines.push(JSON.parse(line));
  });
  return lines;
}

/** CPU seconds the process spends per minute over `windowMs`. */
async function cpuPerMinute(pid: number, windowMs = CPU_WINDOW_MS): Promise<number> {
  const before = cpuSeconds(pid);
  await sleep(windowMs);
  return ((cpuSeconds(pid) - before) * 60_000) / windowMs;
}

const usedMemory = async (bench: Bench) => Number(/^used_memory:(\d+)/m.exec((await bench.redis.info('memory')) as string)![1]);

/** Schedule rows of `userId`, inserted in chunks: `count` of the given timing. */
async function insertSchedules(bench: Bench, userId: string, count: number, timing: Timing): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
    const rows = ids.slice(i, i + INSERT_CHUNK).map((id) => ({ id, user_id: userId, name: 'bench', mode: 'react', q: 'hello', ...timing }));
    await bench.knex('schedules').insert(rows);
  }
  return ids;
}

/** Their timers, upserted REGISTER_BATCH at a time (each batch's scripts go out on one connection without waiting). */
async function registerTimers(timers: TickScheduler, ids: string[], timing: Timing): Promise<void> {
  for (let i = 0; i < ids.length; i += REGISTER_BATCH) await Promise.all(ids.slice(i, i + REGISTER_BATCH).map((id) => timers.register(id, timing)));
}

function lateness(lines: TickLine[], from: number): Record<string, number> {
  const measured = lines.filter((line) => line.outcome === 'started' && Date.parse(line.planned_at) >= from);
  const taken = measured.map((line) => line.lateness_ms);
  const queued = measured.map((line) => line.time - Date.parse(line.planned_at));
  return {
    ticks: measured.length,
    'taken p50 ms': round(percentile(taken, 50), 1),
    'taken p99 ms': round(percentile(taken, 99), 1),
    'run queued p50 ms': round(percentile(queued, 50), 1),
    'run queued p99 ms': round(percentile(queued, 99), 1),
    'tick duration p50 ms': round(percentile(measured.map((line) => line.ms), 50), 1),
  };
}

/** Part 1: memory per schedule, idle CPU with 10,000 timers against none, lateness of 100 ticking every second. */
export async function timersAtScale(bench: Bench, started: ChildProcess[]): Promise<void> {
  const env = { ...bench.env, LOG_LEVEL: 'info', METRICS_ENABLED: 'false', RUNS_PER_USER_LIMIT: '100000', LOCAL_MODEL_TOKEN_DELAY_MS: '0' };
  const worker = await spawnProcess('../workers/main.js', env, /worker ready/);
  started.push(worker);
  const lines = tickLines(worker);
  const queue = new Queue<ScheduleTick>(SCHEDULE_QUEUE, { connection: bench.redis, prefix: bench.identity.keys.bullPrefix(SCHEDULE_QUEUE) });
  const timers = new TickScheduler(queue, bench.redis);
  try {
    await sleep(WORKER_WARM_UP_MS);
    const idleBaseline = await cpuPerMinute(worker.pid!);

    const { user } = await bench.user('schedules@example.test');
    const idleTiming: Timing = { cron: IDLE_CRON, every_seconds: null, timezone: 'UTC' };
    const idle = await insertSchedules(bench, user.id, SCHEDULES, idleTiming);
    const memoryBefore = await usedMemory(bench);
    const registerStarted = performance.now();
    await registerTimers(timers, idle, idleTiming);
    const registerSeconds = (performance.now() - registerStarted) / 1000;
    const bytesPerSchedule = ((await usedMemory(bench)) - memoryBefore) / idle.length;

    const firingTiming: Timing = { cron: null, every_seconds: 1, timezone: 'UTC' };
    const firing = await insertSchedules(bench, user.id, FIRING, firingTiming);
    await sleep(SETTLE_MS);
    // The firing ones start only after the idle minute is measured, so it sees 10,000 timers and no tick.
    const idleWithTimers = await cpuPerMinute(worker.pid!);
    await registerTimers(timers, firing, firingTiming);
    const registered = await timers.count();
    const from = Date.now() + SETTLE_MS;
    await sleep(SETTLE_MS);
    const ticking = (await cpuPerMinute(worker.pid!, LATENESS_WINDOW_MS)) / 60;
    await Promise.all(firing.map((id) => timers.unregister(id)));

    console.log(`\nschedules, part 1: ${SCHEDULES.toLocaleString('en')} idle timers on "${IDLE_CRON}", then ${FIRING} more every second; one worker process\n`);
    console.table({
      'timers registered': { value: registered },
      [`register ${SCHEDULES.toLocaleString('en')} timers (s)`]: { value: round(registerSeconds, 2) },
      'Redis used_memory per schedule (bytes)': { value: round(bytesPerSchedule, 0) },
      'worker CPU s per idle minute, 0 timers': { value: round(idleBaseline, 3) },
      'worker CPU s per idle minute, 10,000 timers': { value: round(idleWithTimers, 3) },
      'idle CPU ratio (10,000 / 0)': { value: round(idleWithTimers / idleBaseline, 2) },
    });
    console.log(`\ntick lateness against the planned instant, ${FIRING} schedules every second (beside the idle ones) for ${LATENESS_WINDOW_MS / 1000} s (taken: the worker starts the tick; run queued: its run is stored and queued)\n`);
    console.table({ lateness: lateness(lines, from) });
    console.log(`worker CPU while they tick (and their runs run in the same worker): ${round(ticking, 2)} cores`);
    const outcomes = lines.reduce<Record<string, number>>((counts, line) => ({ ...counts, [line.outcome]: (counts[line.outcome] ?? 0) + 1 }), {});
    console.log(`tick outcomes: ${JSON.stringify(outcomes)}`);
  } finally {
    await queue.close();
  }
}

/** `npm run bench -- schedules [part]`: every part in order, or the one named (`timers`, `handoff`). */
export async function run(args: string[] = []): Promise<void> {
  const runs = (part: string) => args.length === 0 || args.includes(part);
  const redisServer = await startRedis();
  const bench = await benchEnvironment('schedules', { redisUrl: redisServer.url });
  const started: ChildProcess[] = [];
  try {
    if (runs('timers')) await timersAtScale(bench, started);
  } finally {
    for (const child of started.reverse()) await stop(child);
    await bench.drop();
    redisServer.child.kill();
  }
  if (runs('handoff')) await multitaskHandoff();
}
