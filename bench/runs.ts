import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createLogger } from '../src/logger.js';
import { DEFAULT_LEASE, RunLease, type OutgoingEvent, type RunRef } from '../src/shared/run-lease.js';
import { workerServices } from '../workers/assembly.js';
import { WorkerLifecycle } from '../workers/run-control.js';
import { RunExecutor } from '../workers/executor.js';
import { LocalModel } from '../workers/models/local.js';
import { benchEnvironment, percentile, round, spawnProcess, stop, timedRun, type Timing } from './support.js';
import { run as runGateway } from './runs-gateway.js';

/**
 * (1) POST → first token and → done, p50/p99 over sequential runs, next to the same loop called
 * in-process; (2) completed runs/s at 50 concurrent clients; (3) open streams on one web process:
 * RSS per stream and Redis connections (CLIENT LIST), which must not grow with the stream count.
 */
const PORT = 3918;
const SEQUENTIAL = 500;
const CONCURRENT_CLIENTS = 50;
const THROUGHPUT_RUNS = 3000;
const STREAM_STEPS = [0, 1000, 5000];

/** The same executor, called directly: no HTTP, no queue, no relay. */
class TimingLease extends RunLease {
  marks = new Map<string, number>();
  override publish(run: RunRef, owner: string, events: OutgoingEvent[]): Promise<number> {
    if (events.some((e) => e.type === 'token') && !this.marks.has(`${run.id}:token`)) this.marks.set(`${run.id}:token`, performance.now());
    return super.publish(run, owner, events);
  }
}

function summary(label: string, samples: Timing[]) {
  const first = samples.map((s) => s.firstToken);
  const done = samples.map((s) => s.done);
  return { label, 'first token p50': round(percentile(first, 50)), 'first token p99': round(percentile(first, 99)), 'done p50': round(percentile(done, 50)), 'done p99': round(percentile(done, 99)) };
}

/** `npm run bench -- runs [local|gateway]`: both modes unless one is named. */
export async function run(args: string[] = []) {
  const mode = args[0];
  if (mode !== 'gateway') await runLocal();
  if (mode !== 'local') await runGateway();
}

async function runLocal() {
  const bench = await benchEnvironment('runs');
  const env = { ...bench.env, PORT: String(PORT), LOCAL_MODEL_TOKEN_DELAY_MS: '0', LOG_LEVEL: 'info', RUNS_PER_USER_LIMIT: '100000' };
  const { redis, identity } = bench;
  const { user, key } = await bench.user('bench@example.test');
  const url = `http://127.0.0.1:${PORT}`;
  const web = await spawnProcess('../src/server.js', env, /web listening/);
  const worker = await spawnProcess('../workers/main.js', env, /worker ready/);
  try {
    // (1) In-process baseline, then the same runs through HTTP → BullMQ → worker → stream → SSE.
    const { keys } = identity;
    const lease = new TimingLease(redis, keys, DEFAULT_LEASE);
    const inProcessWorker = workerServices(bench.config, { knex: bench.knex, models: identity.models, redis, logger: createLogger('silent', 'bench') });
    const executor = new RunExecutor({ ...inProcessWorker.deps, lease, modelFor: () => new LocalModel(0), defaultModel: 'local' });
    const lifecycle = new WorkerLifecycle();
    const inProcess: Timing[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      const conversationId = randomUUID();
      const runId = randomUUID();
      await identity.models.Conversation.query().insert({ id: conversationId, user_id: user.id });
      await identity.models.Run.query().insert({ id: runId, user_id: user.id, conversation_id: conversationId, mode: 'react', status: 'queued', query: `What is ${i}*7?` });
      await identity.models.Message.query().insert({ id: randomUUID(), conversation_id: conversationId, run_id: runId, role: 'user', content: `What is ${i}*7?` });
      await redis.set(keys.conversationActive(user.id, conversationId), runId);
      const started = performance.now();
      const cancel = new AbortController();
      await executor.execute({ runId, conversationId, userId: user.id, attempt: 1, crashes: 0 }, cancel, lifecycle.controlFor(cancel));
      inProcess.push({ firstToken: lease.marks.get(`${runId}:token`)! - started, done: performance.now() - started });
    }
    await inProcessWorker.close();
    for (let i = 0; i < 50; i++) await timedRun(url, key, `warm-up ${i}*2`);
    const queued: Timing[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) queued.push(await timedRun(url, key, `What is ${i}*7?`));
    const rows = [summary('in-process loop', inProcess), summary('HTTP → queue → worker → SSE', queued)];
    console.log(`\n(1) latency over ${SEQUENTIAL} sequential runs, local model at zero token delay (ms)`);
    console.table(rows);
    const overhead = percentile(queued.map((s) => s.done), 50) - percentile(inProcess.map((s) => s.done), 50);
    console.log(`queue-path overhead p50 (done): ${round(overhead)} ms (target ≤ 5 ms); ratio ${round(percentile(queued.map((s) => s.done), 50) / percentile(inProcess.map((s) => s.done), 50))}×`);

    // (2) Throughput: 50 clients, each running questions back to back.
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENT_CLIENTS }, async () => {
        while (next < THROUGHPUT_RUNS) await timedRun(url, key, `What is ${next++}+1?`);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(`\n(2) ${THROUGHPUT_RUNS} runs by ${CONCURRENT_CLIENTS} concurrent clients in ${round(seconds)} s: ${round(THROUGHPUT_RUNS / seconds, 1)} runs/s (target ≥ 300)`);

    // (3) Open streams: no worker, so every run stays queued and its stream stays open.
    await stop(worker);
    const controllers: AbortController[] = [];
    const streamRows = [];
    const webConnections = async () => (await redis.client('LIST') as string).split('\n').filter((l) => / name=web/.test(l)).length;
    const rss = async () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${web.pid}/status`, 'utf8'))![1]) * 1024;
    for (const target of STREAM_STEPS) {
      while (controllers.length < target) {
        const batch = Math.min(200, target - controllers.length);
        await Promise.all(
          Array.from({ length: batch }, async () => {
            const controller = new AbortController();
            controllers.push(controller);
            const res = await fetch(`${url}/api/react`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ q: 'hold' }), signal: controller.signal });
            const reader = (res.body as ReadableStream<Uint8Array>).getReader();
            await reader.read(); // the `run` event has arrived: the stream is open
            void reader.read().catch(() => {});
          }),
        );
      }
      streamRows.push({ 'open streams': target, 'web RSS MiB': round((await rss()) / 2 ** 20, 1), 'web Redis connections': await webConnections() });
    }
    console.log('\n(3) open streams on one web process');
    console.table(streamRows);
    const [base, , top] = streamRows as { 'web RSS MiB': number }[];
    console.log(`RSS per open stream: ${round(((top!['web RSS MiB'] - base!['web RSS MiB']) * 1024) / STREAM_STEPS.at(-1)!, 1)} KiB (target: Redis connections ≤ 4 at any count)`);
    for (const c of controllers) c.abort();
  } finally {
    await Promise.all([stop(web), stop(worker)]);
    await bench.drop();
  }
}
