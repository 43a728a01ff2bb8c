import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { meterCpu, type CpuReading, type CpuSources } from './cpu.js';
import { PgCounter } from './pg-counter.js';
import { startRedis } from './capacity.js';
import { freePort } from '../test/support/redis-server.js';
import { BENCH_ORIGIN, benchEnvironment, completedPerSecond, FEATURE_ENVS, otlpSink, percentile, readEvents, round, spawnPolled, spawnProcess, stop } from './support.js';
import { printProfiles } from './profile-summary.js';
import { measureStreams, openFds, perStreamKiB, softFdLimit, type StreamSample, type StreamServer } from './stream-memory.js';
import { deleteKeysWithPrefix } from '../src/shared/redis-keys.js';

/**
 * The gateway path (`npm run bench -- runs-gateway`, or `-- runs gateway`). A local streaming gateway
 * (20 tokens written at once, its own process) read directly is the baseline; the platform runs the
 * same model through the gateway provider (`POST /api/react`). Plain and all on run on a redis-server
 * of the bench's own (so Redis CPU and commands are only the bench's), all on one Postgres database of its own.
 *
 * Three platform configurations, each a web + worker of its own, side by side in the same run:
 *  - plain: metrics, CORS, rate limits, budgets and tracing all off; LOG_LEVEL=info;
 *  - all on: metrics + CORS (DESIGN §12), a key with a 100,000 rpm rate limit (never refused) and a
 *    token budget that is never spent (DESIGN §18), tracing exported to a local OTLP/HTTP receiver;
 *  - deployed default: what the README's Procfile gives with src/config.ts's defaults: NODE_ENV=production,
 *    LOG_LEVEL=warn, metrics on (the default, no METRICS_TOKEN), CORS on for the bench's origin (as the
 *    issue's deployment and the console's users have it; CORS_ORIGINS is empty by default), no rate limit, budget or tracing, on the machine's shared Redis (127.0.0.1:6379) under a
 *    key prefix of its own (deleted after). Its Redis CPU includes other users' work: the printout says so
 *    and gives the shared Redis's CPU over a few idle seconds before the rounds, per second and per run.
 *    Every configuration raises RUNS_PER_USER_LIMIT (20 clients share one user; the check costs the same).
 *
 * (1) Quiet, then again under two CPU hogs (two child processes spinning a busy loop for the phase):
 *     first-token p50/p99 over sequential runs (interleaved between variants), direct and plain
 *     platform, and their difference (target ≤ 4 ms p50); own CPU ms per run of web, worker, their
 *     Postgres backends and Redis and the total (target ≤ 5 ms); completed runs/s at 20 clients in
 *     alternating rounds, and platform / direct. Under hogs: direct and plain only.
 * (2) Quiet only: all on and deployed default beside plain, in the same interleaved runs and rounds:
 *     first-token p50/p99 and overhead over direct, runs/s, CPU ms/run by part, and their ratios to plain.
 *     When BENCH_CPU_PROF=<dir> is set, the plain web and worker write V8 CPU profiles; once they stop,
 *     the top 15 frames by self time (idle excluded) are printed for each, and the same time attributed to
 *     the nearest frame of our own code (dist/src, dist/workers), else the nearest dependency (profile-summary.ts).
 * (3) Per run, sequential runs after warm-up, plain and all on each on a web + worker of its own started
 *     for this: Postgres statements and transactions (a counting proxy, `PgCounter`, per role), Redis
 *     commands from MONITOR filtered to the configuration's key prefix: every command, those run
 *     inside Lua scripts included ("commands"), and the top-level ones only ("calls", i.e. round trips
 *     bar pipelining), by command name; background commands (queue polling, lease renewals) are
 *     measured idle over a few seconds and printed apart (they are in the per-run figures too).
 *     (Not for the deployed default: MONITOR on the shared Redis would slow everyone using it.)
 * (4) Memory per open stream, beside a bare `node:http` server: first a web process without a worker
 *     (so every POSTed run stays queued and its SSE stream stays open, no CPU spent; metrics + CORS on,
 *     for /metrics), then, in a process of its own, a server that answers each POST with SSE headers and
 *     one event and holds the stream open (bare-stream-server.ts). The same client code opens the same
 *     counts to each (1,000 and N, 200 at a time) and samples each the same way: both run under
 *     --expose-gc with gc-on-signal.ts preloaded, and each sample is SIGUSR2 (a full GC), 1 s, then RSS
 *     (/proc VmRSS), V8 heap used (the web's /metrics, the bare server's GET) and open fds, at 0, 1,000 and
 *     N streams. KiB per stream for both and platform / bare (target ≤ 1.2× RSS). The streams are closed
 *     after, and each server's open file descriptors are checked to come back down.
 * (5) Skipped by default. Only with BENCH_SKIP_SEEDED=0: phase (1)'s quiet figures again after seeding
 *     1M messages over 100k runs of another user (takes minutes); target seeded ≥ 0.90 of empty runs/s.
 *
 * Every ratio and difference compares figures of the same run. A run not ended after 30 s counts as
 * failed (printed) instead of hanging the bench; progress lines go to stderr; ports are free ones, not
 * fixed, as other benchmarks may run on the machine. The default run takes about 5–7 minutes, BENCH_QUICK=1 about 1.5.
 *
 * File descriptors: N streams need about N in the bench process and N in the server; the open-files soft limit
 * is read from /proc/self/limits (20,000 soft and hard here) and the stream count capped 2,000 below it.
 *
 * Knobs: BENCH_QUICK=1 (a smoke run: fewer sequential runs, one 3 s throughput round, 1,000 streams);
 * BENCH_STREAMS=N (open streams in (4)); BENCH_SKIP_SEEDED=0 (run (5)); BENCH_CPU_PROF=<dir> (V8 CPU
 * profiles of the plain web and worker, summarized in (2); profiling slows the plain pair a little).
 */
const QUICK = process.env.BENCH_QUICK === '1';
const SEQUENTIAL = QUICK ? 40 : 200;
const WARM_UP = QUICK ? 10 : 30;
const CLIENTS = 20;
/** Throughput: ROUNDS alternating rounds of ROUND_SECONDS per variant, after an unmeasured round of LOAD_WARM_UP_SECONDS. */
const ROUNDS = QUICK ? 1 : 3;
const ROUND_SECONDS = QUICK ? 3 : 5;
const LOAD_WARM_UP_SECONDS = QUICK ? 1 : 2;
const COUNTED_RUNS = QUICK ? 40 : 200;
const IDLE_SECONDS = QUICK ? 2 : 5;
const OPEN_STREAMS = Number(process.env.BENCH_STREAMS ?? (QUICK ? 1000 : 5000));
const HOGS = 2;
const SEED_RUNS = 100_000;
const MESSAGES_PER_RUN = 10;
const RATE_LIMIT_RPM = 100_000;
const BUDGET = { limit: 1_000_000_000_000, period: 'month' } as const;
/** The machine's Redis, shared with other work: the deployed default runs on it, under a key prefix of its own. */
const SHARED_REDIS_URL = 'redis://127.0.0.1:6379';
/** Node flags of every process whose memory (4) samples: SIGUSR2 then collects garbage (gc-on-signal.ts). */
const SAMPLED = ['--expose-gc', '--import', new URL('./gc-on-signal.js', import.meta.url).href];

interface Timing {
  firstToken: number;
  done: number;
  /** When the response headers and the first event of each type arrived (ms from the request). */
  marks: Record<string, number>;
  headers?: Headers;
}

/** Reads an SSE response, timing the first event `isToken` accepts and the one `isEnd` accepts. */
async function timed(response: Promise<Response>, isToken: (event: string | undefined, data: string) => boolean, isEnd: (event: string | undefined, data: string) => boolean): Promise<Timing> {
  const started = performance.now();
  const timing: Timing = { firstToken: NaN, done: NaN, marks: {} };
  const res = await response;
  timing.marks.headers = performance.now() - started;
  timing.headers = res.headers;
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

/** A run that has not ended after this long fails (a stuck run must not hang the bench). */
const RUN_TIMEOUT_MS = 30_000;

const direct = (gatewayUrl: string) => () =>
  timed(
    fetch(`${gatewayUrl}/v1/chat/completions`, { signal: AbortSignal.timeout(RUN_TIMEOUT_MS), ...json({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'hello' }] }, 'bench') }),
    (_event, data) => data !== '[DONE]' && Boolean((JSON.parse(data) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content),
    (_event, data) => data === '[DONE]',
  );

const platform = (url: string, key: string) => () =>
  timed(fetch(`${url}/api/react`, { ...json({ q: 'hello' }, key), signal: AbortSignal.timeout(RUN_TIMEOUT_MS), headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, origin: BENCH_ORIGIN } }), (event) => event === 'token', (event, data) => event === 'done' && JSON.parse(data).status === 'succeeded');

/** Progress on stderr, so a slow or stuck phase shows where it is. */
const progress = (what: string) => process.stderr.write(`[runs-gateway ${new Date().toISOString().slice(11, 19)}] ${what}\n`);

/** Stops a child; SIGKILL if it has not exited 10 s after SIGTERM. */
async function stopSoon(child: ChildProcess): Promise<void> {
  const timer = setTimeout(() => {
    progress(`pid ${child.pid} ignored SIGTERM for 10 s: SIGKILL`);
    child.kill('SIGKILL');
  }, 10_000);
  await stop(child);
  clearTimeout(timer);
}

/** Runs `run`, counting a failure (error or timeout) instead of throwing; at most 5 in a row before giving up. */
async function tolerant(run: () => Promise<Timing>, failures: { n: number; inARow: number; last?: string }): Promise<Timing | undefined> {
  try {
    const t = await run();
    failures.inARow = 0;
    return t;
  } catch (error) {
    failures.n++;
    failures.last = String(error);
    if (++failures.inARow >= 5) throw new Error(`5 failed runs in a row, the last: ${failures.last}`);
    return undefined;
  }
}

const firstToken = (samples: Timing[], p: number) => percentile(samples.map((s) => s.firstToken), p);

/** Where the platform's first-token time goes: p50 of the time each mark arrived, sequential runs. */
function phases(samples: Timing[]): Record<string, number> {
  const marks = ['headers', 'run', 'status', 'token', 'done'];
  return Object.fromEntries(marks.map((mark) => [`${mark} p50 ms`, round(percentile(samples.map((s) => s.marks[mark] ?? NaN), 50))]));
}

interface Variant {
  name: string;
  run: () => Promise<Timing>;
  /** Whose CPU to meter during its throughput rounds (the platform's; none for the direct baseline). */
  cpu?: CpuSources;
}

interface Measured {
  samples: Timing[];
  perSecond: number;
  runs: number;
  errors: number;
  rounds: number[];
  cpu?: CpuReading;
}

/**
 * Sequential runs of every variant interleaved (order reversed every other run), then completed runs/s
 * at CLIENTS clients in alternating rounds, metering each platform variant's CPU over its own rounds.
 */
async function measure(variants: Variant[]): Promise<Map<string, Measured>> {
  const out = new Map<string, Measured>(variants.map((v) => [v.name, { samples: [], perSecond: 0, runs: 0, errors: 0, rounds: [] }]));
  const failures = new Map(variants.map((v) => [v.name, { n: 0, inARow: 0 } as { n: number; inARow: number; last?: string }]));
  progress(`sequential runs: ${variants.map((v) => v.name).join(', ')}`);
  for (let i = 0; i < WARM_UP; i++) for (const v of variants) await tolerant(v.run, failures.get(v.name)!);
  for (let i = 0; i < SEQUENTIAL; i++) {
    for (const v of i % 2 === 0 ? variants : [...variants].reverse()) {
      const t = await tolerant(v.run, failures.get(v.name)!);
      if (t) out.get(v.name)!.samples.push(t);
    }
  }
  for (const [name, f] of failures) if (f.n) console.log(`WARNING: ${name}: ${f.n} sequential runs failed (errors counted, not timed); the last: ${f.last}`);
  progress('throughput rounds');
  for (const v of variants) await completedPerSecond(v.run, CLIENTS, LOAD_WARM_UP_SECONDS);
  const seconds = new Map(variants.map((v) => [v.name, 0]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const v of r % 2 === 0 ? variants : [...variants].reverse()) {
      const m = out.get(v.name)!;
      const stopMeter = v.cpu ? await meterCpu(v.cpu) : undefined;
      const started = performance.now();
      const rate = await completedPerSecond(v.run, CLIENTS, ROUND_SECONDS);
      seconds.set(v.name, seconds.get(v.name)! + (performance.now() - started) / 1000);
      if (stopMeter) {
        const reading = await stopMeter();
        m.cpu = Object.fromEntries((Object.keys(reading) as (keyof CpuReading)[]).map((k) => [k, (m.cpu?.[k] ?? 0) + reading[k]])) as CpuReading;
      }
      m.runs += rate.runs;
      m.errors += rate.errors;
      m.rounds.push(rate.perSecond);
    }
  }
  for (const v of variants) {
    const m = out.get(v.name)!;
    m.perSecond = m.runs / seconds.get(v.name)!;
  }
  return out;
}

const cpuMsPerRun = (m: Measured) => {
  if (!m.cpu) return {};
  const total = m.cpu.web + m.cpu.worker + m.cpu.postgres + m.cpu.redis;
  const ms = (s: number) => round((s * 1000) / m.runs, 3);
  return { 'CPU web ms/run': ms(m.cpu.web), 'CPU worker ms/run': ms(m.cpu.worker), 'CPU PG ms/run': ms(m.cpu.postgres), 'CPU Redis ms/run': ms(m.cpu.redis), 'CPU total ms/run': ms(total) };
};
const cpuTotalMs = (m: Measured) => (m.cpu ? ((m.cpu.web + m.cpu.worker + m.cpu.postgres + m.cpu.redis) * 1000) / m.runs : NaN);

function printMeasured(results: Map<string, Measured>): void {
  console.table(
    Object.fromEntries(
      [...results].map(([name, m]) => [
        name,
        {
          'first token p50 ms': round(firstToken(m.samples, 50)),
          'first token p99 ms': round(firstToken(m.samples, 99)),
          [`runs/s (${CLIENTS} clients)`]: round(m.perSecond, 1),
          errors: m.errors,
          ...cpuMsPerRun(m),
        },
      ]),
    ),
  );
}

function printAgainstDirect(label: string, platformM: Measured, directM: Measured): void {
  console.log(
    `[${label}] first-token overhead platform − direct: p50 ${round(firstToken(platformM.samples, 50) - firstToken(directM.samples, 50))} ms (target ≤ 4 ms), ` +
      `p99 ${round(firstToken(platformM.samples, 99) - firstToken(directM.samples, 99))} ms; ` +
      `runs/s platform / direct ${round(platformM.perSecond / directM.perSecond, 3)} (${round(platformM.perSecond, 1)} / ${round(directM.perSecond, 1)} runs/s; target ≥ 0.20); ` +
      `own CPU ${round(cpuTotalMs(platformM), 2)} ms/run all in (target ≤ 5 ms)`,
  );
}

/** Two busy loops in processes of their own, until stopped. */
function startHogs(): ChildProcess[] {
  return Array.from({ length: HOGS }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

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

/** CPU ms per run of each part, deployed / plain. */
function cpuRatios(m: Measured, plain: Measured): string {
  if (!m.cpu || !plain.cpu) return 'no CPU reading';
  const parts = ['web', 'worker', 'postgres', 'redis'] as const;
  const perRun = (x: Measured, part: (typeof parts)[number]) => x.cpu![part] / x.runs;
  return parts.map((part) => `${part} ${round(perRun(m, part) / perRun(plain, part), 2)}×`).join(', ') + `, total ${round(cpuTotalMs(m) / cpuTotalMs(plain), 2)}×`;
}

function printAgainstPlain(label: string, m: Measured, plain: Measured, sharedRedisIdleMsPerS: number): void {
  console.log(
    `[quiet, ${label} vs plain] runs/s ${round(m.perSecond / plain.perSecond, 3)}× (${round(m.perSecond, 1)} / ${round(plain.perSecond, 1)}); ` +
      `first-token p50 ${round(firstToken(m.samples, 50) - firstToken(plain.samples, 50))} ms, p99 ${round(firstToken(m.samples, 99) - firstToken(plain.samples, 99))} ms (${label} − plain); ` +
      `CPU/run ${label} / plain: ${cpuRatios(m, plain)}`,
  );
  console.log(
    `  (its Redis is the machine's shared one: its CPU includes other users' work; idle, with no run in flight, it used ${round(sharedRedisIdleMsPerS, 2)} ms/s, ` +
      `≈ ${round(sharedRedisIdleMsPerS / m.perSecond, 3)} ms per run at ${round(m.perSecond, 1)} runs/s)`,
  );
}

/** A web process holding queued runs' streams (no worker): POSTs to /api/react, its heap read from /metrics. */
function platformStreams(pid: number, url: string, key: string): StreamServer {
  const heapUsed = async () => {
    const text = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${FEATURE_ENVS.on.METRICS_TOKEN}` } }).then((r) => r.text());
    return Number(/^agent_platform_nodejs_heap_size_used_bytes (\S+)/m.exec(text)?.[1] ?? NaN);
  };
  return { pid, url: `${url}/api/react`, request: json({ q: 'hold' }, key), heapUsed };
}

/** The bare node:http server (bare-stream-server.ts): the same POST, its heap from its GET. */
function bareStreams(pid: number, url: string, key: string): StreamServer {
  const heapUsed = async () => ((await fetch(url).then((r) => r.json())) as { heapUsed: number }).heapUsed;
  return { pid, url: `${url}/api/react`, request: json({ q: 'hold' }, key), heapUsed };
}

function printStreams(platformRows: StreamSample[], bareRows: StreamSample[]): void {
  console.table(Object.fromEntries([...platformRows.map((r) => [`platform web, ${r['open streams']}`, r]), ...bareRows.map((r) => [`bare node:http, ${r['open streams']}`, r])]));
  const [p, b] = [perStreamKiB(platformRows), perStreamKiB(bareRows)];
  const n = platformRows[platformRows.length - 1]!['open streams'];
  console.log(
    `per open stream, 0 to ${n}: RSS platform ${round(p.rss)} KiB, bare ${round(b.rss)} KiB: platform / bare ${round(p.rss / b.rss, 2)}× (target ≤ 1.2×); ` +
      `V8 heap used platform ${round(p.heap)} KiB, bare ${round(b.heap)} KiB: ${round(p.heap / b.heap, 2)}×`,
  );
  if (platformRows.length === 3) console.log(`platform RSS per stream from ${platformRows[1]!['open streams']} to ${n}: ${round(perStreamKiB(platformRows.slice(1)).rss)} KiB`);
}

/** Redis commands seen by MONITOR for one key prefix: by name, top level and inside scripts apart. */
class CommandCounter {
  readonly byName = new Map<string, { top: number; lua: number }>();
  counting = false;
  constructor(readonly prefix: string) {}
  see(args: string[], source: string): void {
    if (!this.counting || !args.some((a) => a.includes(this.prefix))) return;
    const name = args[0]!.toLowerCase();
    const entry = this.byName.get(name) ?? { top: 0, lua: 0 };
    if (source === 'lua') entry.lua++;
    else entry.top++;
    this.byName.set(name, entry);
  }
  reset(): void {
    this.byName.clear();
  }
  totals(): { top: number; lua: number } {
    let top = 0;
    let lua = 0;
    for (const e of this.byName.values()) (top += e.top), (lua += e.lua);
    return { top, lua };
  }
}

async function commandstatsTotal(redis: Redis): Promise<number> {
  const text = await redis.info('commandstats');
  return [...text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].reduce((sum, m) => sum + Number(m[2]), 0);
}

export async function run(_args: string[] = []) {
  const started: ChildProcess[] = [];
  let hogs: ChildProcess[] = [];
  const redisServer = await startRedis();
  const bench = await benchEnvironment('gateway', { redisUrl: redisServer.url });
  const sink = await otlpSink();
  const admin = new Redis(redisServer.url);
  const benchStarted = performance.now();
  // Free ports, not fixed ones: other benchmarks may be running on this machine.
  const GATEWAY_PORT = await freePort();
  const PORTS = { plain: await freePort(), on: await freePort(), deployed: await freePort(), countPlain: await freePort(), countOn: await freePort(), streams: await freePort(), bare: await freePort() };
  const shared = new Redis(SHARED_REDIS_URL);
  const deployedPrefix = `${bench.env.REDIS_KEY_PREFIX}deployed:`;
  try {
    started.push(await spawnProcess('./stream-gateway.js', {}, /gateway listening/, [String(GATEWAY_PORT)]));
    const gatewayUrl = `http://127.0.0.1:${GATEWAY_PORT}`;
    const database = new URL(bench.config.databaseUrl);
    type Config = 'plain' | 'on';
    const envOf = (config: Config, name: string, port: number, databaseUrl = bench.env.DATABASE_URL!) => ({
      ...bench.env,
      ...(config === 'on' ? { ...FEATURE_ENVS.on, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' } : FEATURE_ENVS.off),
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      // Each web + worker pair on queues of its own.
      REDIS_KEY_PREFIX: `${bench.env.REDIS_KEY_PREFIX}${name}:`,
      LOG_LEVEL: 'info',
      RUNS_PER_USER_LIMIT: '100000',
      MODEL_PROVIDER: 'gateway',
      GATEWAY_URL: gatewayUrl,
      GATEWAY_API_KEY: 'bench',
      GATEWAY_MODEL: 'bench-model',
    });
    const { user, key: plainKey } = await bench.user('bench@example.test');
    const onKey = (await bench.identity.apiKeys.create(user.id, { name: 'limited, budgeted', rate_limit_rpm: RATE_LIMIT_RPM, token_budget: BUDGET })).key;
    const keyOf = (config: Config) => (config === 'on' ? onKey : plainKey);
    const label = { plain: 'platform plain', on: 'platform all on' } as const;
    const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
    const pairs = {} as Record<Config, { web: ChildProcess; worker: ChildProcess }>;
    for (const config of ['plain', 'on'] as const) {
      const env = envOf(config, config, PORTS[config]);
      const web = await spawnProcess('../src/server.js', env, /web listening/, [], config === 'plain' ? profile : []);
      started.push(web);
      const worker = await spawnProcess('../workers/main.js', env, /worker ready/, [], config === 'plain' ? profile : []);
      started.push(worker);
      pairs[config] = { web, worker };
    }
    const urlOf = (port: number) => `http://127.0.0.1:${port}`;
    // The deployed default: the Procfile's web + worker with src/config.ts's defaults (metrics on; rate limits,
    // budgets and tracing unset, so off), CORS on for the bench's origin, NODE_ENV=production, LOG_LEVEL=warn, the machine's Redis.
    // Only the per-user run limit is raised, as in every configuration here (its check costs the same at any value).
    const deployedEnv = {
      DATABASE_URL: bench.env.DATABASE_URL!,
      JWT_SECRET: bench.env.JWT_SECRET!,
      ENCRYPTION_KEY: bench.env.ENCRYPTION_KEY!,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      REDIS_URL: SHARED_REDIS_URL,
      REDIS_KEY_PREFIX: deployedPrefix,
      PORT: String(PORTS.deployed),
      RUNS_PER_USER_LIMIT: '100000',
      CORS_ORIGINS: BENCH_ORIGIN,
      MODEL_PROVIDER: 'gateway',
      GATEWAY_URL: gatewayUrl,
      GATEWAY_API_KEY: 'bench',
      GATEWAY_MODEL: 'bench-model',
    };
    const deployedUrl = urlOf(PORTS.deployed);
    progress('starting the deployed-default pair (LOG_LEVEL=warn: readiness polled)');
    const deployedWeb = await spawnPolled('../src/server.js', deployedEnv, async () => (await fetch(`${deployedUrl}/healthz`)).ok);
    started.push(deployedWeb);
    // The worker says nothing at warn level either: it is ready when a run posted before it started completes.
    let probed = false;
    void platform(deployedUrl, plainKey)().then(() => (probed = true), () => undefined);
    const deployedWorker = await spawnPolled('../workers/main.js', deployedEnv, async () => probed);
    started.push(deployedWorker);
    if ((await fetch(`${deployedUrl}/metrics`)).status === 404) throw new Error('the deployed-default web has no /metrics: metrics are not on by default any more?');
    const cpuOf = (config: Config): CpuSources => ({ web: pairs[config].web.pid!, worker: pairs[config].worker.pid!, knex: bench.knex, redis: bench.redis });
    const directVariant: Variant = { name: 'gateway read directly', run: direct(gatewayUrl) };
    const platformVariant = (config: Config): Variant => ({ name: label[config], run: platform(urlOf(PORTS[config]), keyOf(config)), cpu: cpuOf(config) });
    const deployedLabel = 'platform deployed default';
    const deployedCpu: CpuSources = { web: deployedWeb.pid!, worker: deployedWorker.pid!, knex: bench.knex, redis: shared };
    const deployedVariant: Variant = { name: deployedLabel, run: platform(deployedUrl, plainKey), cpu: deployedCpu };

    // The all-on configuration really has its features on: RateLimit fields on its answers, traces exported.
    const probe = await platformVariant('on').run();
    if (probe.headers?.get('ratelimit-policy') == null) throw new Error('the all-on key answers without RateLimit-Policy');
    if (probe.headers?.get('access-control-allow-origin') !== BENCH_ORIGIN) throw new Error('the all-on web answers without CORS');

    console.log(
      `\ngateway-path benchmark${QUICK ? ' (BENCH_QUICK=1: a smoke run)' : ''}: ${SEQUENTIAL} sequential runs per variant (after ${WARM_UP} warm-up, interleaved), ` +
        `${CLIENTS} clients × ${ROUNDS} alternating round(s) of ${ROUND_SECONDS} s per variant (after ${LOAD_WARM_UP_SECONDS} s unmeasured); ` +
        `Redis: redis-server of the bench's own (${redisServer.url}); ${cpus().length} CPUs, load average ${loadavg().map((l) => round(l, 1)).join(' ')} (other work on the machine shows here)`,
    );
    console.log(`plain = metrics, CORS, rate limits, budgets, tracing off; all on = metrics + CORS + a ${RATE_LIMIT_RPM.toLocaleString('en')} rpm key with a never-spent token budget + tracing to a local OTLP/HTTP receiver`);
    console.log(
      `deployed default = src/config.ts's defaults as the Procfile runs them: NODE_ENV=production, LOG_LEVEL=warn, metrics on (the default), ` +
        `CORS off (CORS_ORIGINS is empty by default), no rate limit, budget or tracing (none is on by default); the machine's shared Redis (${SHARED_REDIS_URL}, prefix ${deployedPrefix})`,
    );
    const idleMeter = await meterCpu(deployedCpu);
    await sleep(IDLE_SECONDS * 1000);
    const sharedRedisIdleMsPerS = ((await idleMeter()).redis * 1000) / IDLE_SECONDS;

    // (1) + (2) quiet.
    const quietVariants = [directVariant, platformVariant('plain'), platformVariant('on'), deployedVariant];
    const quiet = await measure(quietVariants);
    console.log('\n(1)+(2) quiet');
    printMeasured(quiet);
    console.log('platform, when each part of the stream arrived (sequential runs, ms from the POST):');
    console.table(Object.fromEntries([label.plain, label.on, deployedLabel].map((name) => [name, phases(quiet.get(name)!.samples)])));
    printAgainstDirect('quiet, plain', quiet.get(label.plain)!, quiet.get(directVariant.name)!);
    printAgainstDirect('quiet, all on', quiet.get(label.on)!, quiet.get(directVariant.name)!);
    printAgainstDirect('quiet, deployed default', quiet.get(deployedLabel)!, quiet.get(directVariant.name)!);
    printAgainstPlain('deployed default', quiet.get(deployedLabel)!, quiet.get(label.plain)!, sharedRedisIdleMsPerS);
    const [plainQ, onQ] = [quiet.get(label.plain)!, quiet.get(label.on)!];
    console.log(
      `(2) all on vs plain: runs/s all on / plain ${round(onQ.perSecond / plainQ.perSecond, 3)} (target ≥ 0.90); first-token p50 all on − plain ${round(firstToken(onQ.samples, 50) - firstToken(plainQ.samples, 50))} ms, ` +
        `p99 all on − plain ${round(firstToken(onQ.samples, 99) - firstToken(plainQ.samples, 99))} ms; own CPU all on − plain ${round(cpuTotalMs(onQ) - cpuTotalMs(plainQ), 3)} ms/run; ${sink.exports()} OTLP exports received so far`,
    );
    if (sink.exports() === 0) console.log('WARNING: the all-on web and worker exported no traces');

    // (1) under two CPU hogs: direct and plain.
    hogs = startHogs();
    await sleep(200);
    const hogged = await measure([directVariant, platformVariant('plain')]);
    for (const hog of hogs) hog.kill('SIGKILL');
    hogs = [];
    console.log(`\n(1) under ${HOGS} CPU hogs (busy-loop processes, one per core, for the phase)`);
    printMeasured(hogged);
    printAgainstDirect('hogs, plain', hogged.get(label.plain)!, hogged.get(directVariant.name)!);
    console.log(`hogs / quiet (plain platform): first-token p50 ${round(firstToken(hogged.get(label.plain)!.samples, 50) / firstToken(plainQ.samples, 50), 2)}×, runs/s ${round(hogged.get(label.plain)!.perSecond / plainQ.perSecond, 3)}`);

    // (5) seeded, only on request: the quiet figures again on a database of 100k runs.
    if (process.env.BENCH_SKIP_SEEDED === '0') {
      const seeding = performance.now();
      await seed(bench.knex);
      console.log(`\n(5) seeded ${SEED_RUNS * MESSAGES_PER_RUN} messages over ${SEED_RUNS} runs of another user in ${round((performance.now() - seeding) / 1000, 1)} s`);
      const seeded = await measure(quietVariants);
      printMeasured(seeded);
      console.log(`runs/s seeded / empty (plain): ${round(seeded.get(label.plain)!.perSecond / plainQ.perSecond, 3)}, (all on): ${round(seeded.get(label.on)!.perSecond / onQ.perSecond, 3)} (target ≥ 0.90)`);
    }

    // The timing pairs are done: stop them, so (3) sees only its own pair's background work.
    progress('stopping the timing pairs');
    for (const config of ['plain', 'on'] as const) await Promise.all([stopSoon(pairs[config].web), stopSoon(pairs[config].worker)]);
    await Promise.all([stopSoon(deployedWeb), stopSoon(deployedWorker)]);
    if (process.env.BENCH_CPU_PROF) printProfiles(process.env.BENCH_CPU_PROF, { 'plain web': pairs.plain.web.pid!, 'plain worker': pairs.plain.worker.pid! });

    // (3) statements and commands per run, each configuration on a pair of its own behind counting proxies.
    const monitorSource = new Redis(redisServer.url);
    const monitor = await monitorSource.monitor();
    type PgFigures = { web: { s: number; t: number }; worker: { s: number; t: number } };
    const counted = {} as Record<Config, { runs: number; idle: { top: number; lua: number }; commands: CommandCounter; pg: PgFigures; commandstats: number }>;
    const counters: CommandCounter[] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      for (const c of counters) c.see(args, source);
    });
    for (const config of ['plain', 'on'] as const) {
      const port = config === 'plain' ? PORTS.countPlain : PORTS.countOn;
      const pg = { web: new PgCounter({ host: database.hostname, port: Number(database.port || 5432) }), worker: new PgCounter({ host: database.hostname, port: Number(database.port || 5432) }) };
      const through = (p: number) => Object.assign(new URL(database), { hostname: '127.0.0.1', port: String(p) }).toString();
      const [webPort, workerPort] = await Promise.all([pg.web.start(), pg.worker.start()]);
      const name = `count-${config}`;
      const commands = new CommandCounter(`${bench.env.REDIS_KEY_PREFIX}${name}:`);
      counters.push(commands);
      const own: ChildProcess[] = [];
      try {
        own.push(await spawnProcess('../src/server.js', envOf(config, name, port, through(webPort)), /web listening/));
        own.push(await spawnProcess('../workers/main.js', envOf(config, name, port, through(workerPort)), /worker ready/));
        progress(`counting per run: ${label[config]}`);
        const one = platform(urlOf(port), keyOf(config));
        const failures = { n: 0, inARow: 0 } as { n: number; inARow: number; last?: string };
        for (let i = 0; i < WARM_UP; i++) await tolerant(one, failures);
        await sleep(500);
        // Background: the same pair idle.
        commands.counting = true;
        await sleep(IDLE_SECONDS * 1000);
        commands.counting = false;
        const idle = commands.totals();
        commands.reset();
        pg.web.reset();
        pg.worker.reset();
        const stats0 = await commandstatsTotal(admin);
        commands.counting = true;
        for (let i = 0; i < COUNTED_RUNS; i++) await tolerant(one, failures);
        if (failures.n) console.log(`WARNING: ${label[config]}: ${failures.n} runs failed while counting (they are in the counts); the last: ${failures.last}`);
        await sleep(300); // the worker's last writes after `done`
        commands.counting = false;
        const stats1 = await commandstatsTotal(admin);
        const figures = { web: { s: pg.web.statements, t: pg.web.transactions }, worker: { s: pg.worker.statements, t: pg.worker.transactions } };
        counted[config] = { runs: COUNTED_RUNS, idle, commands, pg: figures, commandstats: stats1 - stats0 - 1 };
      } finally {
        await Promise.all(own.map(stopSoon));
        await Promise.all([pg.web.close(), pg.worker.close()]);
      }
    }
    monitor.disconnect();
    monitorSource.disconnect();
    const per = (n: number, config: Config) => round(n / counted[config].runs, 2);
    console.log(`\n(3) per run: ${COUNTED_RUNS} sequential runs after ${WARM_UP} warm-up, each configuration on a web + worker of its own (Postgres behind a counting proxy per role; Redis by MONITOR, this pair's key prefix)`);
    console.table(
      Object.fromEntries(
        (['plain', 'on'] as const).map((config) => {
          const f = counted[config].pg;
          const t = counted[config].commands.totals();
          return [
            label[config],
            {
              'PG statements/run (web+worker)': per(f.web.s + f.worker.s, config),
              'PG stmts web/worker': `${per(f.web.s, config)} / ${per(f.worker.s, config)}`,
              'PG transactions/run': per(f.web.t + f.worker.t, config),
              'PG xacts web/worker': `${per(f.web.t, config)} / ${per(f.worker.t, config)}`,
              'Redis commands/run (Lua incl.)': per(t.top + t.lua, config),
              'Redis calls/run (top level)': per(t.top, config),
              'INFO commandstats Δ/run (whole server)': per(counted[config].commandstats, config),
              'idle background cmds/s (calls/s)': `${round((counted[config].idle.top + counted[config].idle.lua) / IDLE_SECONDS, 1)} (${round(counted[config].idle.top / IDLE_SECONDS, 1)})`,
            },
          ];
        }),
      ),
    );
    const names = [...new Set((['plain', 'on'] as const).flatMap((c) => [...counted[c].commands.byName.keys()]))];
    const total = (c: Config, n: string) => (counted[c].commands.byName.get(n)?.top ?? 0) + (counted[c].commands.byName.get(n)?.lua ?? 0);
    names.sort((a, b) => total('on', b) + total('plain', b) - total('on', a) - total('plain', a));
    console.log('Redis commands per run by name: top-level calls + commands run inside Lua scripts (EVALSHA/EVAL counted as calls; the commands they run under "in Lua")');
    console.table(
      Object.fromEntries(
        names.map((n) => [
          n,
          Object.fromEntries(
            (['plain', 'on'] as const).flatMap((c) => {
              const e = counted[c].commands.byName.get(n) ?? { top: 0, lua: 0 };
              return [[`${c}: calls/run`, per(e.top, c)], [`${c}: in Lua/run`, per(e.lua, c)]];
            }),
          ),
        ]),
      ),
    );

    // (4) open streams: a web without a worker (every run stays queued, its stream open and idle), then a bare node:http server.
    const fdLimit = softFdLimit();
    const streams = Math.min(OPEN_STREAMS, fdLimit - 2000);
    if (streams < OPEN_STREAMS) console.log(`\n(open files limit ${fdLimit}: ${streams} streams instead of ${OPEN_STREAMS})`);
    const steps = [...new Set([Math.min(1000, streams), streams])];
    const streamEnv = { ...envOf('plain', 'streams', PORTS.streams), ...FEATURE_ENVS.on };
    progress(`open streams: up to ${streams}, on the platform's web then on a bare node:http server`);
    const web = await spawnProcess('../src/server.js', streamEnv, /web listening/, [], SAMPLED);
    started.push(web);
    const onPlatform = await measureStreams(platformStreams(web.pid!, urlOf(PORTS.streams), plainKey), steps);
    await stopSoon(web);
    const bare = await spawnProcess('./bare-stream-server.js', {}, /bare listening/, [String(PORTS.bare)], SAMPLED);
    started.push(bare);
    const onBare = await measureStreams(bareStreams(bare.pid!, urlOf(PORTS.bare), plainKey), steps);
    await stopSoon(bare);
    console.log(
      `\n(4) open SSE streams, the same client code, counts and sampling for both (200 opened at a time; each sample after a full GC (SIGUSR2 to a preloaded gc(), both under --expose-gc) and 1 s): the platform's web (POST /api/react, queued runs, no worker; ` +
        `metrics+CORS on, for /metrics) opened them in ${round(onPlatform.seconds, 1)} s; a bare node:http server (SSE headers and one event, held open) in ${round(onBare.seconds, 1)} s`,
    );
    printStreams(onPlatform.rows, onBare.rows);
    console.log(`streams closed: the web held ${onPlatform.fdsAfter} open fds after (${onPlatform.rows[0]!['open fds']} before opening), the bare server ${onBare.fdsAfter} (${onBare.rows[0]!['open fds']}); the bench process ${openFds('self')}`);
    console.log(`\nwhole bench: ${round((performance.now() - benchStarted) / 1000, 0)} s; load average now ${loadavg().map((l) => round(l, 1)).join(' ')}`);
  } finally {
    for (const hog of hogs) hog.kill('SIGKILL');
    await Promise.all(started.map(stopSoon));
    admin.disconnect();
    await deleteKeysWithPrefix(shared, deployedPrefix).catch((error) => console.log(`WARNING: the deployed pair's keys (${deployedPrefix}*) on the shared Redis were not deleted: ${error}`));
    shared.disconnect();
    sink.server.close();
    await bench.drop();
    redisServer.child.kill('SIGTERM');
  }
}
