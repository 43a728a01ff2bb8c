import type { ChildProcess } from 'node:child_process';
import { meterCpu, type CpuReading } from './cpu.js';
import { BENCH_ORIGIN, benchEnvironment, completedPerSecond, FEATURE_ENVS, FEATURES, featureLabel, percentile, readEvents, round, spawnProcess, stop, type Features } from './support.js';

/**
 * The gateway path: a local streaming gateway (20 tokens written at once, its own process) read
 * directly is the baseline; the platform runs the same model through the gateway provider.
 * (1) first-token p50/p99 over sequential runs, both, and their difference; (2) completed runs/s at
 * 20 concurrent clients for 15 s, both, and their ratio; (3) own CPU seconds per 1,000 runs of
 * web, worker, their Postgres backends and Redis; (4) the same after seeding 1M messages over 100k
 * runs of another user. Targets: overhead ≤ 4 ms p50; ≥ 0.20 of the direct rate; seeded ≥ 0.90 of empty.
 * The platform side runs twice, side by side: metrics and CORS off and on (DESIGN §12); target on ≥ 0.95 of off.
 */
const PORTS: Record<Features, number> = { off: 3920, on: 3940 };
const GATEWAY_PORT = 3921;
const SEQUENTIAL = 200;
const WARM_UP = 30;
const CLIENTS = 20;
const THROUGHPUT_SECONDS = 15;
const SEED_RUNS = 100_000;
const MESSAGES_PER_RUN = 10;

interface Timing {
  firstToken: number;
  done: number;
  /** When the response headers and the first event of each type arrived (ms from the request). */
  marks: Record<string, number>;
}

/** Reads an SSE response, timing the first event `isToken` accepts and the one `isEnd` accepts. */
async function timed(response: Promise<Response>, isToken: (event: string | undefined, data: string) => boolean, isEnd: (event: string | undefined, data: string) => boolean): Promise<Timing> {
  const started = performance.now();
  const timing: Timing = { firstToken: NaN, done: NaN, marks: {} };
  const res = await response;
  timing.marks.headers = performance.now() - started;
  if (!res.ok || !res.body) throw new Error(`status ${res.status}: ${await res.text()}`);
  await readEvents(res, ({ event, data }) => {
    if (event) timing.marks[event] ??= performance.now() - started;
    if (Number.isNaN(timing.firstToken) && isToken(event, data)) timing.firstToken = performance.now() - started;
    if (isEnd(event, data)) timing.done = performance.now() - started;
  });
  if (Number.isNaN(timing.done) || Number.isNaN(timing.firstToken)) throw new Error('the stream ended early');
  return timing;
}

const json = (body: unknown, key?: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
  body: JSON.stringify(body),
});

const direct = (gatewayUrl: string) => () =>
  timed(
    fetch(`${gatewayUrl}/v1/chat/completions`, json({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'hello' }] }, 'bench')),
    (_event, data) => data !== '[DONE]' && Boolean((JSON.parse(data) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content),
    (_event, data) => data === '[DONE]',
  );

const platform = (url: string, key: string) => () =>
  timed(fetch(`${url}/api/react`, { ...json({ q: 'hello' }, key), headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, origin: BENCH_ORIGIN } }), (event) => event === 'token', (event, data) => event === 'done' && JSON.parse(data).status === 'succeeded');

async function sequential(run: () => Promise<Timing>): Promise<Timing[]> {
  for (let i = 0; i < WARM_UP; i++) await run();
  const samples: Timing[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) samples.push(await run());
  return samples;
}

const throughput = (run: () => Promise<Timing>) => completedPerSecond(run, CLIENTS, THROUGHPUT_SECONDS);

const firstToken = (samples: Timing[], p: number) => percentile(samples.map((s) => s.firstToken), p);

/** Where the platform's first-token time goes: p50 of the time each mark arrived, sequential runs. */
function phases(samples: Timing[]): Record<string, number> {
  const marks = ['headers', 'run', 'status', 'token', 'done'];
  return Object.fromEntries(marks.map((mark) => [`${mark} p50 ms`, round(percentile(samples.map((s) => s.marks[mark] ?? NaN), 50))]));
}

const perThousand = (cpu: CpuReading, runs: number) =>
  Object.fromEntries(Object.entries({ ...cpu, total: cpu.web + cpu.worker + cpu.postgres + cpu.redis }).map(([k, s]) => [k, round((s / runs) * 1000, 2)]));

async function seed(knex: import('knex').Knex): Promise<void> {
  const [other] = await knex('users').insert({ email: 'seeded@example.test', password_hash: 'x' }).returning('id');
  const userId = (other as { id: string }).id;
  await knex.raw(
    `with c as (insert into conversations (id, user_id, title) select gen_random_uuid(), ?, 'seeded' from generate_series(1, ?) returning id)
     insert into runs (id, user_id, conversation_id, mode, status, query, answer, started_at, finished_at)
     select gen_random_uuid(), ?, c.id, 'react', 'succeeded', 'seeded question', 'seeded answer', now(), now() from c`,
    [userId, SEED_RUNS, userId],
  );
  await knex.raw(
    `insert into messages (id, conversation_id, run_id, role, content)
     select gen_random_uuid(), r.conversation_id, r.id, case when g % 2 = 1 then 'user' else 'assistant' end, 'seeded message ' || g
     from runs r cross join generate_series(1, ?) g where r.user_id = ?`,
    [MESSAGES_PER_RUN, userId],
  );
  // Vacuumed as well as analysed: a table that size is in its steady state, not in the one-off autovacuum
  // a bulk insert triggers, which would otherwise run during the measurement on the same two cores.
  await knex.raw('vacuum analyze');
}

export async function run() {
  const started: ChildProcess[] = [];
  const bench = await benchEnvironment('gateway');
  try {
    started.push(await spawnProcess('./stream-gateway.js', {}, /gateway listening/, [String(GATEWAY_PORT)]));
    const gatewayUrl = `http://127.0.0.1:${GATEWAY_PORT}`;
    const envOf = (features: Features) => ({
      ...bench.env,
      ...FEATURE_ENVS[features],
      PORT: String(PORTS[features]),
      // Each configuration's web and worker on queues of their own.
      REDIS_KEY_PREFIX: `${bench.env.REDIS_KEY_PREFIX}${features}:`,
      LOG_LEVEL: 'info',
      RUNS_PER_USER_LIMIT: '100000',
      MODEL_PROVIDER: 'gateway',
      GATEWAY_URL: gatewayUrl,
      GATEWAY_API_KEY: 'bench',
      GATEWAY_MODEL: 'bench-model',
    });
    const { key } = await bench.user('bench@example.test');
    const urlOf = (features: Features) => `http://127.0.0.1:${PORTS[features]}`;
    // BENCH_CPU_PROF=<dir> writes V8 CPU profiles of web and worker there (for finding where time goes).
    const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
    const cpuSources = {} as Record<Features, { web: number; worker: number; knex: typeof bench.knex; redis: typeof bench.redis }>;
    for (const features of FEATURES) {
      const web = await spawnProcess('../src/server.js', envOf(features), /web listening/, [], profile);
      started.push(web);
      const worker = await spawnProcess('../workers/main.js', envOf(features), /worker ready/, [], profile);
      started.push(worker);
      cpuSources[features] = { web: web.pid!, worker: worker.pid!, knex: bench.knex, redis: bench.redis };
    }
    const phase = async (label: string) => {
      const directSamples = await sequential(direct(gatewayUrl));
      const platformSamples = {} as Record<Features, Timing[]>;
      for (const features of FEATURES) platformSamples[features] = await sequential(platform(urlOf(features), key));
      const directRate = await throughput(direct(gatewayUrl));
      const platformRate = {} as Record<Features, Awaited<ReturnType<typeof throughput>>>;
      const cpu = {} as Record<Features, CpuReading>;
      for (const features of FEATURES) {
        const stopMeter = await meterCpu(cpuSources[features]);
        platformRate[features] = await throughput(platform(urlOf(features), key));
        cpu[features] = await stopMeter();
      }
      console.log(`\n${label}`);
      const row = (samples: Timing[], rate: { perSecond: number; errors: number }) => ({ 'first token p50 ms': round(firstToken(samples, 50)), 'first token p99 ms': round(firstToken(samples, 99)), 'runs/s (20 clients)': round(rate.perSecond, 1), errors: rate.errors });
      console.table({
        'gateway read directly': row(directSamples, directRate),
        ...Object.fromEntries(FEATURES.map((features) => [`platform (gateway provider) [${featureLabel(features)}]`, row(platformSamples[features], platformRate[features])])),
      });
      console.log('platform, when each part of the stream arrived (sequential runs):');
      console.table(Object.fromEntries(FEATURES.map((features) => [featureLabel(features), phases(platformSamples[features])])));
      for (const features of FEATURES) {
        const overhead = firstToken(platformSamples[features], 50) - firstToken(directSamples, 50);
        console.log(`[${featureLabel(features)}] first-token overhead p50: ${round(overhead)} ms (target ≤ 4); p99: ${round(firstToken(platformSamples[features], 99) - firstToken(directSamples, 99))} ms`);
        console.log(`[${featureLabel(features)}] runs/s platform / direct: ${round(platformRate[features].perSecond / directRate.perSecond, 3)} (target ≥ 0.20)`);
        console.log(`[${featureLabel(features)}] own CPU seconds per 1,000 runs (${platformRate[features].runs} runs metered):`);
        console.table(perThousand(cpu[features], platformRate[features].runs));
      }
      console.log(
        `metrics+CORS on / off (speed; ≥ 0.95 is the target): runs/s ${round(platformRate.on.perSecond / platformRate.off.perSecond, 3)}; ` +
          `first token p50 ${round(firstToken(platformSamples.off, 50) / firstToken(platformSamples.on, 50), 3)}`,
      );
      return platformRate.on;
    };
    console.log(`\ngateway-path benchmark: ${SEQUENTIAL} sequential runs (after ${WARM_UP} warm-up), ${CLIENTS} clients × ${THROUGHPUT_SECONDS} s`);
    const empty = await phase('(1–3) empty database');
    if (process.env.BENCH_SKIP_SEEDED) return;
    const seeding = performance.now();
    await seed(bench.knex);
    console.log(`\nseeded ${SEED_RUNS * MESSAGES_PER_RUN} messages over ${SEED_RUNS} runs of another user in ${round((performance.now() - seeding) / 1000, 1)} s`);
    const seeded = await phase('(4) after seeding');
    console.log(`\nruns/s seeded / empty: ${round(seeded.perSecond / empty.perSecond, 3)} (target ≥ 0.90)`);
  } finally {
    await Promise.all(started.map(stop));
    await bench.drop();
  }
}
