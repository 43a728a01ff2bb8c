import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { cpuSeconds } from './cpu.js';
import { alternatingRates, benchEnvironment, otlpSink, percentile, rateRow, round, spawnProcess, stop, timedRun } from './support.js';

/**
 * Limits and budgets (DESIGN §18), what they cost a request.
 *
 * Part 1, rate limits: requests/s and p50 of an authenticated GET with rate-limited API keys against
 * unlimited ones, same web process, same run, in alternating rounds. A limited key costs one Redis
 * script per batch of limit/1000 requests, 100 here (an unlimited one nothing). A key may allow at
 * most 100,000 rpm (~1,667/s) and the load is far more, so each variant spreads its requests over
 * KEYS keys (the unlimited ones too,
 * so both fill the credential cache alike), each limited to 100,000 rpm: never refused (a refusal
 * fails the benchmark). Target: limited / unlimited ≥ 0.95.
 *
 * Part 2, token budgets: first-token p50 (sequential, interleaved) and completed runs/s at 20 clients
 * (alternating rounds) of runs through a local streaming gateway with a key whose budget is never
 * spent against a key without one, on the same web and worker: a budgeted run reads its budgets when
 * it starts and before each model call and charges each call (Redis), an unbudgeted one does nothing.
 *
 * Part 3, traces: completed runs/s at 20 clients with tracing exporting to a local OTLP/HTTP receiver
 * against tracing off, each on a web + worker of its own, alternating rounds. Target ≥ 0.90.
 */
const PORT = 3957;
const PATH = '/api/auth/verify';
const KEYS = 32;
const CONNECTIONS = 64;
/** Per round and variant. */
const DURATION_S = 4;
const WARM_UP_S = 2;
const ROUNDS = 6;

export interface Result {
  rps: number;
  p50: number;
  p99: number;
  /** The web process's own CPU time per request. */
  cpuUs: number;
}

export interface Variant {
  name: string;
  /** Bearer tokens the requests rotate through (each connection cycles them in order). */
  tokens: string[];
}

/** Load on `url + path` (GET) with `tokens` in rotation; any non-2xx answer or error fails it. */
export async function measureGet(web: ChildProcess, url: string, path: string, tokens: string[], duration = DURATION_S, connections = CONNECTIONS): Promise<Result> {
  const cpuBefore = cpuSeconds(web.pid!);
  const requests = tokens.map((token) => ({ method: 'GET' as const, path, headers: { authorization: `Bearer ${token}` } }));
  let started = 0;
  const result = await autocannon({
    url,
    connections,
    duration,
    requests,
    // Each connection starts at a token of its own, as independent clients would; otherwise every
    // connection sends the same key at the same moment, a lockstep no real traffic has.
    setupClient: (client: { setRequests(requests: unknown[]): void }) => {
      const offset = started++ % requests.length;
      client.setRequests([...requests.slice(offset), ...requests.slice(0, offset)]);
    },
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const cpuUs = ((cpuSeconds(web.pid!) - cpuBefore) / result.requests.total) * 1e6;
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpuUs };
}

const mean = (results: Result[], field: keyof Result) => results.reduce((sum, r) => sum + r[field], 0) / results.length;

/**
 * `rounds` rounds against one web process, the variants in turn and their order reversed every
 * other round, so drift (other work on the machine, JIT, caches) falls on all alike. Returns each
 * variant's mean figures and prints them.
 */
export async function compareVariants(title: string, web: ChildProcess, url: string, path: string, variants: Variant[], rounds = ROUNDS): Promise<Map<string, Result>> {
  for (const variant of variants) await measureGet(web, url, path, variant.tokens, WARM_UP_S);
  const results = new Map(variants.map((variant) => [variant.name, [] as Result[]]));
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) results.get(variant.name)!.push(await measureGet(web, url, path, variant.tokens));
  }
  const means = new Map([...results].map(([name, r]) => [name, { rps: mean(r, 'rps'), p50: mean(r, 'p50'), p99: mean(r, 'p99'), cpuUs: mean(r, 'cpuUs') }]));
  console.log(`\n${title}: GET ${path}, ${CONNECTIONS} connections, ${rounds} alternating rounds of ${DURATION_S} s per variant, one web process (autocannon)\n`);
  console.table(
    Object.fromEntries(
      [...means].map(([name, r]) => [name, { 'req/s': Math.round(r.rps), 'p50 ms': round(r.p50, 2), 'p99 ms': round(r.p99, 2), 'web CPU µs/req': round(r.cpuUs, 1) }]),
    ),
  );
  return means;
}

const GATEWAY_PORT = 3958;
const RUN_PORTS = { off: 3959, on: 3956 } as const;
const SEQUENTIAL = 150;
const WARM_UP_RUNS = 20;
const RUN_CLIENTS = 20;
const RUN_ROUND_S = 6;
const RUN_ROUNDS = 4;
const BUDGET = { limit: 1_000_000_000_000, period: 'month' } as const;

type TimedRun = () => Promise<{ firstToken: number }>;

/** Sequential runs of each variant, one after the other in turn, so drift falls on all alike: first-token samples. */
async function firstTokens(variants: Record<string, TimedRun>): Promise<Record<string, number[]>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let i = 0; i < WARM_UP_RUNS; i++) for (const run of Object.values(variants)) await run();
  for (let i = 0; i < SEQUENTIAL; i++) {
    const order = i % 2 === 0 ? Object.entries(variants) : Object.entries(variants).reverse();
    for (const [name, run] of order) samples[name]!.push((await run()).firstToken);
  }
  return samples;
}

/** Completed runs/s of each variant at RUN_CLIENTS clients, alternating rounds (after one unmeasured half round each: the JIT's, a tracing SDK's first batches); the mean of each. */
const runRates = (variants: Record<string, TimedRun>) => alternatingRates(variants, RUN_CLIENTS, RUN_ROUND_S, RUN_ROUNDS);

function printRates(title: string, rates: Awaited<ReturnType<typeof runRates>>): void {
  console.log(`\n${title}: completed runs/s at ${RUN_CLIENTS} clients, ${RUN_ROUNDS} alternating rounds of ${RUN_ROUND_S} s\n`);
  console.table(Object.fromEntries(Object.entries(rates).map(([name, r]) => [name, rateRow(r)])));
}

/** Part 1: rate-limited keys against unlimited ones on one web process. */
async function rateLimits(bench: Awaited<ReturnType<typeof benchEnvironment>>): Promise<void> {
  const { user } = await bench.user('bench@example.test');
  const keys = async (rpm: number | null) =>
    Promise.all(Array.from({ length: KEYS }, async (_, i) => (await bench.identity.apiKeys.create(user.id, { name: `${rpm ?? 'free'} ${i}`, rate_limit_rpm: rpm })).key));
  const unlimited: Variant = { name: 'unlimited keys', tokens: await keys(null) };
  const limited: Variant = { name: 'limited keys (100,000 rpm)', tokens: await keys(100_000) };
  const web = await spawnProcess('../src/server.js', { ...bench.env, PORT: String(PORT), METRICS_ENABLED: 'false' }, /web listening/);
  try {
    const url = `http://127.0.0.1:${PORT}`;
    // The variants differ as they should: only the limited keys' answers carry the RateLimit fields.
    for (const [variant, counted] of [[unlimited, false], [limited, true]] as const) {
      const res = await fetch(`${url}${PATH}`, { headers: { authorization: `Bearer ${variant.tokens[0]}` } });
      if ((res.headers.get('ratelimit-policy') !== null) !== counted) throw new Error(`${variant.name}: RateLimit-Policy ${res.headers.get('ratelimit-policy')}`);
    }
    const means = await compareVariants('rate limits', web, url, PATH, [unlimited, limited]);
    const [free, counted] = [means.get(unlimited.name)!, means.get(limited.name)!];
    console.log(`req/s limited / unlimited = ${round(counted.rps / free.rps, 3)} (target ≥ 0.95)`);
    console.log(`p50 limited − unlimited = ${round(counted.p50 - free.p50, 2)} ms; web CPU per request limited / unlimited = ${round(counted.cpuUs / free.cpuUs, 3)}`);
  } finally {
    await stop(web);
  }
}

/** Part 2: a key whose budget is never spent against one without, on the same web and worker. */
async function budgets(url: string, free: string, budgeted: string): Promise<void> {
  const budgetVariants = { 'no budget': () => timedRun(url, free, 'hello'), 'budget (never spent)': () => timedRun(url, budgeted, 'hello') };
  const samples = await firstTokens(budgetVariants);
  console.log(`\ntoken budgets: first token, ${SEQUENTIAL} sequential runs each (interleaved), ms\n`);
  console.table(Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, { p50: round(percentile(s, 50)), p99: round(percentile(s, 99)) }])));
  const budgetRates = await runRates(budgetVariants);
  printRates('token budgets', budgetRates);
  console.log(`first-token p50 budget − none = ${round(percentile(samples['budget (never spent)']!, 50) - percentile(samples['no budget']!, 50))} ms; runs/s budget / none = ${round(budgetRates['budget (never spent)']!.perSecond / budgetRates['no budget']!.perSecond, 3)}`);
}

async function budgetsAndTraces(bench: Awaited<ReturnType<typeof benchEnvironment>>, started: ChildProcess[], runs: (part: string) => boolean): Promise<void> {
  started.push(await spawnProcess('./stream-gateway.js', {}, /gateway listening/, [String(GATEWAY_PORT)]));
  const sink = await otlpSink();
  try {
    const envOf = (tracing: 'off' | 'on') => ({
      ...bench.env,
      PORT: String(RUN_PORTS[tracing]),
      REDIS_KEY_PREFIX: `${bench.env.REDIS_KEY_PREFIX}${tracing}:`,
      LOG_LEVEL: 'info',
      METRICS_ENABLED: 'false',
      RUNS_PER_USER_LIMIT: '100000',
      MODEL_PROVIDER: 'gateway',
      GATEWAY_URL: `http://127.0.0.1:${GATEWAY_PORT}`,
      GATEWAY_API_KEY: 'bench',
      GATEWAY_MODEL: 'bench-model',
      ...(tracing === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' } : {}),
    });
    for (const tracing of ['off', 'on'] as const) {
      started.push(await spawnProcess('../src/server.js', envOf(tracing), /web listening/));
      started.push(await spawnProcess('../workers/main.js', envOf(tracing), /worker ready/));
    }
    const urlOf = (tracing: 'off' | 'on') => `http://127.0.0.1:${RUN_PORTS[tracing]}`;
    const { user } = await bench.user('runs@example.test');
    const free = (await bench.identity.apiKeys.create(user.id, { name: 'no budget' })).key;
    const budgeted = (await bench.identity.apiKeys.create(user.id, { name: 'budget', token_budget: BUDGET })).key;

    if (runs('budgets')) await budgets(urlOf('off'), free, budgeted);
    if (!runs('traces')) return;
    const traceRates = await runRates({ 'tracing off': () => timedRun(urlOf('off'), free, 'hello'), 'tracing on (OTLP/HTTP protobuf)': () => timedRun(urlOf('on'), free, 'hello') });
    printRates('traces', traceRates);
    if (sink.exports() === 0) throw new Error('the tracing web and worker exported nothing');
    console.log(`runs/s tracing on / off = ${round(traceRates['tracing on (OTLP/HTTP protobuf)']!.perSecond / traceRates['tracing off']!.perSecond, 3)} (target ≥ 0.90); ${sink.exports()} OTLP exports received`);
  } finally {
    sink.server.close();
  }
}

/** `npm run bench -- limits [part]`: every part in order, or those named (`rates`, `budgets`, `traces`). */
export async function run(args: string[] = []) {
  const runs = (part: string) => args.length === 0 || args.includes(part);
  const bench = await benchEnvironment('limits');
  const started: ChildProcess[] = [];
  try {
    if (runs('rates')) await rateLimits(bench);
    if (runs('budgets') || runs('traces')) await budgetsAndTraces(bench, started, runs);
  } finally {
    for (const child of started.reverse()) await stop(child);
    await bench.drop();
  }
}
