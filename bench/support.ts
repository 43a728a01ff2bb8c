import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { loadConfig, type Config } from '../src/config.js';
import { createKnex, migrateLatest } from '../src/db/knex.js';
import { createRedis } from '../src/redis/connection.js';
import { createLogger } from '../src/logger.js';
import { buildIdentityServices } from '../src/services.js';
import { createUser } from '../src/auth/users.js';
import { deleteKeysWithPrefix } from '../src/shared/redis-keys.js';

/** A throwaway database and key prefix for one benchmark run, the env that points processes at them, and clients on both. */
export async function benchEnvironment(name: string, options: { redisUrl?: string } = {}) {
  const id = `${name}_${Date.now().toString(36)}_${randomBytes(2).toString('hex')}`;
  const base = loadConfig();
  const url = new URL(base.databaseUrl);
  const adminUrl = new URL(url);
  adminUrl.pathname = '/postgres';
  url.pathname = `/ap_bench_${id}`;
  const env: Record<string, string> = {
    DATABASE_URL: url.toString(),
    REDIS_KEY_PREFIX: `ap_bench_${id}:`,
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    NODE_ENV: 'test',
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
  };
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl.toString() });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  await admin(`create database "ap_bench_${id}"`);
  const config: Config = loadConfig({ REDIS_URL: base.redis.url, ...env });
  // The bench's own client measures (CPU meters, seeding) and is patient: on a loaded machine (CPU hogs, other
  // work) a new connection can take more than the 2 s default, and a 5-minute bench should not die of that.
  const knex = createKnex(config.databaseUrl, { poolMax: 4, connectTimeoutMs: 15_000 });
  await migrateLatest(knex);
  const redis = createRedis(config.redis, 'patient', 'bench');
  const identity = buildIdentityServices({ config, knex, redis, logger: createLogger('silent', 'bench') });
  return {
    env,
    config,
    knex,
    redis,
    identity,
    /** A user with a full-access API key, to call the API as. */
    async user(email: string) {
      const user = await createUser(identity.models, { email, password: 'bench-password' });
      const { key } = await identity.apiKeys.create(user.id, { name: 'bench' });
      return { user, key };
    },
    async drop() {
      await deleteKeysWithPrefix(redis, config.redis.keyPrefix);
      redis.disconnect();
      await knex.destroy();
      await admin(`drop database if exists "ap_bench_${id}" with (force)`);
    },
  };
}

/**
 * How long a started process may take to say it is ready. Generous: on this shared 2-core machine, with other
 * benches and suites running (load average 20 and more), a web has taken over 15 s to load and listen.
 */
const START_TIMEOUT_MS = 60_000;

export async function spawnProcess(script: string, env: Record<string, string>, readyPattern: RegExp, args: string[] = [], nodeArgs: string[] = []): Promise<ChildProcess> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(process.execPath, [...nodeArgs, path, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not start`));
    }, START_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      if (readyPattern.test(chunk.toString())) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  child.stdout!.resume();
  return child;
}

/**
 * Starts a process that prints nothing when ready (LOG_LEVEL=warn, as deployed): `ready` is asked
 * every 100 ms until it resolves true (START_TIMEOUT_MS at most; an exit before then fails at once).
 */
export async function spawnPolled(script: string, env: Record<string, string>, ready: () => Promise<boolean>, nodeArgs: string[] = []): Promise<ChildProcess> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(process.execPath, [...nodeArgs, path], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  const until = performance.now() + START_TIMEOUT_MS;
  while (!(await ready().catch(() => false))) {
    if (exited !== undefined) throw new Error(`${script} exited with ${exited}`);
    if (performance.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`${script} did not start`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return child;
}

export const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export const round = (n: number, digits = 2) => Number(n.toFixed(digits));

/** Feeds a server-sent-events body to `onEvent`, event by event, until it ends. */
export async function readEvents(res: Response, onEvent: (event: EventSourceMessage) => void): Promise<void> {
  const parser = createParser({ onEvent });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
}

/**
 * POSTs a run (`/api/react`) and reads its stream, handing each event to `onEvent`; fails when the
 * stream ends without `done`. Resolves to the response (its headers name the run).
 */
export async function postRun(url: string, key: string, body: Record<string, unknown>, onEvent: (event: EventSourceMessage) => void = () => {}, headers: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(`${url}/api/react`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  let done = false;
  await readEvents(res, (event) => {
    done ||= event.event === 'done';
    onEvent(event);
  });
  if (!done) throw new Error(`run ended without done (${res.status})`);
  return res;
}

/** A run to its `done`, for load: nothing is kept of its events. */
export const readRun = (url: string, key: string, body: Record<string, unknown>) => postRun(url, key, body).then(() => undefined);

export interface Finished {
  status: string;
  totalTokens: number;
}

/** POSTs a run (`/api/react` or `/api/dag`) and reads it to `done`: its status and tokens (a refused run: its HTTP status, 0 tokens). */
export async function runToEnd(url: string, key: string, mode: 'react' | 'dag', body: Record<string, unknown>, signal?: AbortSignal): Promise<Finished> {
  const res = await fetch(`${url}/api/${mode}`, { method: 'POST', signal, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) return { status: `http ${res.status}`, totalTokens: (await res.text(), 0) };
  let finished: Finished | undefined;
  await readEvents(res, (event) => {
    if (event.event !== 'done') return;
    const data = JSON.parse(event.data) as { status: string; usage: { total_tokens: number } };
    finished = { status: data.status, totalTokens: data.usage.total_tokens };
  });
  if (!finished) throw new Error(`a ${mode} run ended without done`);
  return finished;
}

/** The origin benchmark clients send: listed in CORS_ORIGINS when CORS is on, so CORS does its whole work. */
export const BENCH_ORIGIN = 'http://127.0.0.1:5999';

/**
 * DESIGN §12's operational features, off and on, for side-by-side runs in one benchmark process:
 * metrics (request timing, /metrics, the worker's metrics port) and CORS.
 */
export const FEATURE_ENVS = {
  off: { METRICS_ENABLED: 'false' },
  on: { METRICS_ENABLED: 'true', METRICS_TOKEN: 'bench-metrics-token-0123456789', CORS_ORIGINS: BENCH_ORIGIN, WORKER_METRICS_PORT: '0' },
} as const;
export type Features = keyof typeof FEATURE_ENVS;
export const FEATURES: Features[] = ['off', 'on'];
/** Short rounds in alternating order, so drift (other work on the machine, JIT, caches) falls on both alike. */
export const ROUND_ORDERS: Features[][] = [
  ['off', 'on'],
  ['on', 'off'],
  ['off', 'on'],
  ['on', 'off'],
];
export const featureLabel = (features: Features) => `metrics+CORS ${features}`;

export interface Timing {
  firstToken: number;
  done: number;
}

/** POSTs a run (`/api/react`) and times its first `token` and its `done` (ms); fails when the stream ends without `done`. */
export async function timedRun(url: string, key: string, q: string): Promise<Timing> {
  const started = performance.now();
  const timing: Timing = { firstToken: NaN, done: NaN };
  await postRun(url, key, { q }, (e) => {
    if (e.event === 'token' && Number.isNaN(timing.firstToken)) timing.firstToken = performance.now() - started;
    if (e.event === 'done') timing.done = performance.now() - started;
  }, { origin: BENCH_ORIGIN });
  return timing;
}

/** Completed runs per second with `clients` clients running back to back for `seconds`; failed runs are counted apart. */
export async function completedPerSecond(run: () => Promise<unknown>, clients: number, seconds: number): Promise<{ perSecond: number; runs: number; errors: number }> {
  const until = performance.now() + seconds * 1000;
  let runs = 0;
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        try {
          await run();
          runs++;
        } catch {
          errors++;
        }
      }
    }),
  );
  return { perSecond: runs / ((performance.now() - started) / 1000), runs, errors };
}

export interface Rate {
  perSecond: number;
  rounds: number[];
  errors: number;
}

/**
 * Completed runs/s of each variant at `clients` clients: a warm-up of half a round each, then
 * `rounds` rounds of `roundS` in alternating order, so drift falls on all alike; the mean of the rounds.
 */
export async function alternatingRates(variants: Record<string, () => Promise<unknown>>, clients: number, roundS: number, rounds: number): Promise<Record<string, Rate>> {
  const rates: Record<string, Rate> = Object.fromEntries(Object.keys(variants).map((name) => [name, { perSecond: 0, rounds: [], errors: 0 }]));
  for (const run of Object.values(variants)) await completedPerSecond(run, clients, roundS / 2);
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? Object.entries(variants) : Object.entries(variants).reverse();
    for (const [name, run] of order) {
      const measured = await completedPerSecond(run, clients, roundS);
      rates[name]!.rounds.push(measured.perSecond);
      rates[name]!.errors += measured.errors;
    }
  }
  for (const rate of Object.values(rates)) rate.perSecond = rate.rounds.reduce((a, b) => a + b, 0) / rate.rounds.length;
  return rates;
}

/** A web and a worker for runs/s rounds on `port`: metrics off, no per-user run cap, the local model streaming a word every `tokenDelayMs`. */
export async function runRateProcesses(benchEnv: Record<string, string>, port: number, tokenDelayMs: number): Promise<ChildProcess[]> {
  const env = { ...benchEnv, PORT: String(port), LOG_LEVEL: 'info', METRICS_ENABLED: 'false', RUNS_PER_USER_LIMIT: '100000', LOCAL_MODEL_TOKEN_DELAY_MS: String(tokenDelayMs) };
  const web = await spawnProcess('../src/server.js', env, /web listening/);
  return [web, await spawnProcess('../workers/main.js', env, /worker ready/).catch(async (err: unknown) => {
    await stop(web);
    throw err;
  })];
}

/** A table row of a rate: its mean, its rounds, its failed runs. */
export const rateRow = (r: Rate) => ({ 'runs/s': round(r.perSecond, 1), rounds: r.rounds.map((v) => round(v, 1)).join(' / '), errors: r.errors });

/** A local OTLP/HTTP receiver that takes every export and keeps only a count of the requests. */
export async function otlpSink(): Promise<{ url: string; exports: () => number; server: Server }> {
  let exports = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, exports: () => exports, server };
}

type StreamTest = (event: string | undefined, data: string) => boolean;

/** ms from `started` to the first event `isFirst` accepts; fails unless the stream ends as `isEnd` says a good one does. */
export async function firstEventMs(started: number, response: Promise<Response>, isFirst: StreamTest, isEnd: StreamTest, label = ''): Promise<number> {
  const res = await response;
  const where = label ? `${label}: ` : '';
  if (!res.ok || !res.body) throw new Error(`${where}status ${res.status}: ${await res.text()}`);
  let first = NaN;
  let ended = false;
  await readEvents(res, ({ event, data }) => {
    if (Number.isNaN(first) && isFirst(event, data)) first = performance.now() - started;
    ended ||= isEnd(event, data);
  });
  if (!ended || Number.isNaN(first)) throw new Error(`${where}the stream ended early`);
  return first;
}

/** A streamed chat completion's chunk that carries answer text, and its end. */
export const isChatContent: StreamTest = (_event, data) => data !== '[DONE]' && Boolean((JSON.parse(data) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content);
export const isChatDone: StreamTest = (_event, data) => data === '[DONE]';

/** Sequential runs of each, interleaved one by one (the order alternating), after `warmUp` unmeasured rounds, so drift falls on all alike. */
export async function interleaved(runs: Record<string, () => Promise<number>>, count: number, warmUp: number): Promise<Record<string, number[]>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(runs).map((name) => [name, []]));
  for (let i = 0; i < warmUp; i++) for (const run of Object.values(runs)) await run();
  for (let i = 0; i < count; i++) {
    const order = i % 2 === 0 ? Object.entries(runs) : Object.entries(runs).reverse();
    for (const [name, run] of order) samples[name]!.push(await run());
  }
  return samples;
}

/** mulberry32: a seeded generator, so every run builds the same corpus. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
