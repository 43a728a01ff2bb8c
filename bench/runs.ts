import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createLogger } from '../src/logger.js';
import { DEFAULT_LEASE, type OutgoingEvent, type RunRef } from '../src/engine/protocol-types.js';
import { EventStream } from '../src/engine/event-stream.js';
import { withRunScripts } from '../src/engine/run-scripts.js';
import { workerServices } from '../workers/runs/assembly.js';
import { WorkerLifecycle } from '../workers/runs/run-control.js';
import { RunExecutor } from '../workers/runs/executor.js';
import { LocalModel } from '../workers/models/local.js';
import type { ChildProcess } from 'node:child_process';
import { BENCH_ORIGIN, benchEnvironment, FEATURE_ENVS, FEATURES, featureLabel, percentile, ROUND_ORDERS, round, spawnProcess, stop, timedRun, type Features, type Timing } from './support.js';
import { run as runGateway } from './runs-gateway.js';

/**
 * (1) POST → first token and → done, p50/p99 over sequential runs, next to the same loop called
 * in-process; (2) completed runs/s at 50 concurrent clients; (3) open streams on one web process:
 * RSS per stream and Redis connections (CLIENT LIST), which must not grow with the stream count.
 * (1) and (2) run side by side with metrics and CORS off and on (DESIGN §12): target on ≥ 0.95 of off.
 */
const PORTS: Record<Features, number> = { off: 3918, on: 3938 };
const SEQUENTIAL = 500;
const CONCURRENT_CLIENTS = 50;
const THROUGHPUT_RUNS = 3000;
const STREAM_STEPS = [0, 1000, 5000];

/** The same executor, called directly: no HTTP, no queue, no relay. */
class TimingStream extends EventStream {
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
  const { redis, identity } = bench;
  const { user, key } = await bench.user('bench@example.test');
  // One web + worker pair per configuration, each on queues of its own (its own key prefix).
  const envOf = (features: Features) => ({
    ...bench.env,
    ...FEATURE_ENVS[features],
    PORT: String(PORTS[features]),
    REDIS_KEY_PREFIX: `${bench.env.REDIS_KEY_PREFIX}${features}:`,
    LOCAL_MODEL_TOKEN_DELAY_MS: '0',
    LOG_LEVEL: 'info',
    RUNS_PER_USER_LIMIT: '100000',
  });
  const urlOf = (features: Features) => `http://127.0.0.1:${PORTS[features]}`;
  const pairs = {} as Record<Features, { web: ChildProcess; worker: ChildProcess }>;
  try {
    for (const features of FEATURES) {
      pairs[features] = {
        web: await spawnProcess('../src/server.js', envOf(features), /web listening/),
        worker: await spawnProcess('../workers/main.js', envOf(features), /worker ready/),
      };
    }
    // (1) In-process baseline, then the same runs through HTTP → BullMQ → worker → stream → SSE.
    const { keys } = identity;
    const events = new TimingStream(withRunScripts(redis), keys, DEFAULT_LEASE);
    const inProcessWorker = workerServices(bench.config, { knex: bench.knex, models: identity.models, redis, logger: createLogger('silent', 'bench'), events });
    const executor = new RunExecutor({ ...inProcessWorker.deps, modelFor: () => new LocalModel(0), defaultModel: 'local' });
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
      inProcess.push({ firstToken: events.marks.get(`${runId}:token`)! - started, done: performance.now() - started });
    }
    await inProcessWorker.close();
    for (const features of FEATURES) for (let i = 0; i < 50; i++) await timedRun(urlOf(features), key, `warm-up ${i}*2`);

    // (1) latency and (2) throughput, both configurations, in two rounds of opposite order.
    const queued: Record<Features, Timing[]> = { off: [], on: [] };
    const rate: Record<Features, { runs: number; seconds: number }> = { off: { runs: 0, seconds: 0 }, on: { runs: 0, seconds: 0 } };
    for (const order of ROUND_ORDERS) {
      for (const features of order) {
        for (let i = 0; i < SEQUENTIAL / ROUND_ORDERS.length; i++) queued[features].push(await timedRun(urlOf(features), key, `What is ${i}*7?`));
        const { runs, seconds } = await throughput(urlOf(features), key, THROUGHPUT_RUNS / ROUND_ORDERS.length);
        rate[features].runs += runs;
        rate[features].seconds += seconds;
      }
    }
    const doneP50 = (samples: Timing[]) => percentile(samples.map((s) => s.done), 50);
    const rows = [summary('in-process loop', inProcess), ...FEATURES.map((features) => summary(`HTTP → queue → worker → SSE [${featureLabel(features)}]`, queued[features]))];
    console.log(`\n(1) latency over ${SEQUENTIAL} sequential runs per configuration, local model at zero token delay (ms)`);
    console.table(rows);
    for (const features of FEATURES) {
      const overhead = doneP50(queued[features]) - doneP50(inProcess);
      console.log(`[${featureLabel(features)}] queue-path overhead p50 (done): ${round(overhead)} ms (target ≤ 5 ms); ratio ${round(doneP50(queued[features]) / doneP50(inProcess))}×`);
    }
    const perSecond = (features: Features) => rate[features].runs / rate[features].seconds;
    console.log(`\n(2) ${THROUGHPUT_RUNS} runs by ${CONCURRENT_CLIENTS} concurrent clients per configuration:`);
    for (const features of FEATURES) console.log(`[${featureLabel(features)}] ${round(rate[features].seconds)} s: ${round(perSecond(features), 1)} runs/s (target ≥ 300)`);
    const firstTokenP50 = (samples: Timing[]) => percentile(samples.map((s) => s.firstToken), 50);
    console.log(
      `metrics+CORS on / off (speed; ≥ 0.95 is the target): runs/s ${round(perSecond('on') / perSecond('off'), 3)}; ` +
        `done p50 ${round(doneP50(queued.off) / doneP50(queued.on), 3)}; first token p50 ${round(firstTokenP50(queued.off) / firstTokenP50(queued.on), 3)}`,
    );
    const scraped = await fetch(`${urlOf('on')}/metrics`, { headers: { authorization: `Bearer ${FEATURE_ENVS.on.METRICS_TOKEN}` } }).then((res) => res.text());
    const started = /^agent_platform_runs_started_total\{mode="react"\} (\d+)/m.exec(scraped)?.[1];
    console.log(`(the "on" web counted ${started} runs started in agent_platform_runs_started_total)`);

    // (3) Open streams: no worker, so every run stays queued and its stream stays open.
    await Promise.all([pairs.off.web, pairs.off.worker, pairs.on.worker].map(stop));
    const { web } = pairs.on;
    const url = urlOf('on');
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
    console.log(`\n(3) open streams on one web process [${featureLabel('on')}]`);
    console.table(streamRows);
    const [base, , top] = streamRows as { 'web RSS MiB': number }[];
    console.log(`RSS per open stream: ${round(((top!['web RSS MiB'] - base!['web RSS MiB']) * 1024) / STREAM_STEPS.at(-1)!, 1)} KiB (target: Redis connections ≤ 4 at any count)`);
    for (const c of controllers) c.abort();
  } finally {
    await Promise.all(Object.values(pairs).flatMap(({ web, worker }) => [stop(web), stop(worker)]));
    await bench.drop();
  }
}

/** `clients` concurrent clients running questions back to back until `total` runs have completed. */
async function throughput(url: string, key: string, total: number): Promise<{ runs: number; seconds: number }> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENT_CLIENTS }, async () => {
      while (next < total) await timedRun(url, key, `What is ${next++}+1?`);
    }),
  );
  return { runs: total, seconds: (performance.now() - started) / 1000 };
}
