import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { benchEnvironment, postRun, round, spawnProcess, stop } from './support.js';
import { PgCounter } from './pg-counter.js';
import { freePort } from '../test/support/redis-server.js';

/**
 * The capacity model's measured inputs (README "Capacity"): per finished run and per streamed
 * token, Redis memory, commands and CPU; per run, Postgres statements, transactions and the
 * connections each role holds; web and worker CPU per run and per token; open streams' cost on a
 * web process; runs/s of one worker process. One web and one worker on a Redis of the bench's own
 * (so no one else's commands are counted), Postgres behind a counting proxy per role.
 */
const PORT = 3941;
const CLIENTS = 25;
const LONG_RUNS = 200;
const SHORT_RUNS = 200;
const OPEN_STREAMS = 1000;
const THROUGHPUT_RUNS = 1000;
const THROUGHPUT_CLIENTS = 50;
/** A question the local model quotes back, so its answer is about 300 tokens (the table's tokens per run). */
const LONG_QUESTION = Array.from({ length: 270 }, (_, i) => `word${i}`).join(' ');
/** Postgres backends flush their statistics when idle for 10 s (PGSTAT_IDLE_INTERVAL); read them after that. */
const PG_STATS_SETTLE_MS = 11_000;
const CLOCK_TICKS = 100;

export async function startRedis(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const ready = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.end(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (ready) return { url, child };
    await sleep(50);
  }
  throw new Error('redis-server did not start');
}

/** One run to its `done`: how many token events it streamed. */
async function runOnce(url: string, key: string, q: string): Promise<number> {
  let tokens = 0;
  await postRun(url, key, { q }, (e) => e.event === 'token' && tokens++);
  return tokens;
}

async function runMany(url: string, key: string, count: number, clients: number, question: (i: number) => string): Promise<{ tokens: number; seconds: number }> {
  let next = 0;
  let tokens = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < count) {
        const streamed = await runOnce(url, key, question(next++));
        tokens += streamed;
      }
    }),
  );
  return { tokens, seconds: (performance.now() - started) / 1000 };
}

function info(text: string, field: string): number {
  return Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(text)?.[1] ?? NaN);
}

async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const text = (await redis.info('commandstats')) as string;
  return new Map([...text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
}

/** CPU seconds a process has used (user + system). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

const rssBytes = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/** Every key under the prefix. */
async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

async function memoryOf(redis: Redis, keys: string[]): Promise<number> {
  let total = 0;
  for (const key of keys) total += Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  return total;
}

interface Processes {
  web: ChildProcess;
  worker: ChildProcess;
}

export async function run() {
  const redisServer = await startRedis();
  const bench = await benchEnvironment('capacity', { redisUrl: redisServer.url });
  const { knex, config } = bench;
  // The bench's own single Redis (never a cluster): its INFO and SCAN cover every key.
  const redis = bench.redis;
  if (!(redis instanceof Redis)) throw new Error('the capacity bench measures a single Redis');
  const prefix = config.redis.keyPrefix;
  const database = new URL(config.databaseUrl);
  const webPg = new PgCounter({ host: database.hostname, port: Number(database.port || 5432) });
  const workerPg = new PgCounter({ host: database.hostname, port: Number(database.port || 5432) });
  const through = (port: number) => Object.assign(new URL(database), { hostname: '127.0.0.1', port: String(port) }).toString();
  const [webPgPort, workerPgPort] = await Promise.all([webPg.start(), workerPg.start()]);
  const env = { ...bench.env, PORT: String(PORT), LOG_LEVEL: 'warn', RUNS_PER_USER_LIMIT: '100000', LOCAL_MODEL_TOKEN_DELAY_MS: '15' };
  const webEnv = { ...env, DATABASE_URL: through(webPgPort) };
  const workerEnv = { ...env, DATABASE_URL: through(workerPgPort) };
  const url = `http://127.0.0.1:${PORT}`;
  const { key } = await bench.user('capacity@example.test');
  const procs: Processes = {
    web: await spawnProcess('../src/server.js', { ...webEnv, LOG_LEVEL: 'info' }, /web listening/),
    worker: await spawnProcess('../workers/main.js', { ...workerEnv, LOG_LEVEL: 'info' }, /worker ready/),
  };
  const xacts = async () => {
    const { rows } = await knex.raw('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()');
    return Number(rows[0].n);
  };
  /** The Redis keys a finished run may leave: wait until only streams are left besides the queues' own. */
  const settled = async () => {
    for (let i = 0; i < 200; i++) {
      const keys = await keysUnder(redis, prefix);
      if (!keys.some((k) => /:seq$|:approvals$|:active$|:runs$|bull:agent-runs:[0-9a-f-]{36}/.test(k))) return keys;
      await sleep(50);
    }
    throw new Error('finished runs left more than their streams');
  };

  try {
    await runMany(url, key, 20, 10, (i) => `warm-up ${i}`);
    await settled();

    /** N runs of a question; every figure per run (and the streams they leave). */
    const measure = async (label: string, count: number, question: (i: number) => string) => {
      await sleep(PG_STATS_SETTLE_MS);
      const streamsBefore = new Set((await keysUnder(redis, `${prefix}run:`)).filter((k) => k.endsWith(':events')));
      const calls0 = await commandCalls(redis);
      const info0 = (await redis.info()) as string;
      const cpu0 = { web: cpuSeconds(procs.web.pid!), worker: cpuSeconds(procs.worker.pid!) };
      const xact0 = await xacts();
      webPg.reset();
      workerPg.reset();
      const { tokens, seconds } = await runMany(url, key, count, CLIENTS, question);
      const keys = await settled();
      const cpu1 = { web: cpuSeconds(procs.web.pid!), worker: cpuSeconds(procs.worker.pid!) };
      const calls1 = await commandCalls(redis);
      const info1 = (await redis.info()) as string;
      const statements = { web: webPg.statements, worker: workerPg.statements };
      const transactions = { web: webPg.transactions, worker: workerPg.transactions };
      const peaks = { web: webPg.peak, worker: workerPg.peak };
      await sleep(PG_STATS_SETTLE_MS);
      const xact1 = await xacts();
      const streams = keys.filter((k) => k.endsWith(':events') && !streamsBefore.has(k));
      const streamBytes = await memoryOf(redis, streams);
      let entries = 0;
      for (const stream of streams) entries += await redis.xlen(stream);
      const ttls = await Promise.all(streams.slice(0, 20).map((s) => redis.ttl(s)));
      const deltas = [...calls1].map(([cmd, n]) => [cmd, (n - (calls0.get(cmd) ?? 0)) / count] as const).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
      const redisCpu = info(info1, 'used_cpu_sys') + info(info1, 'used_cpu_user') - info(info0, 'used_cpu_sys') - info(info0, 'used_cpu_user');
      return {
        label, count, seconds, tokensPerRun: tokens / count,
        streamBytesPerRun: streamBytes / streams.length, eventsPerRun: entries / streams.length, streamsLeft: streams.length,
        otherRunKeysLeft: keys.filter((k) => k.includes(':run:') && !k.endsWith(':events')).length,
        maxTtl: Math.max(...ttls),
        usedMemoryPerRun: (info(info1, 'used_memory') - info(info0, 'used_memory')) / count,
        commands: deltas, commandsPerRun: deltas.reduce((sum, [, n]) => sum + n, 0),
        evalshaPerRun: deltas.find(([cmd]) => cmd === 'evalsha')?.[1] ?? 0,
        redisCpuMsPerRun: (redisCpu * 1000) / count,
        webCpuMsPerRun: ((cpu1.web - cpu0.web) * 1000) / count,
        workerCpuMsPerRun: ((cpu1.worker - cpu0.worker) * 1000) / count,
        pgStatementsPerRun: { web: statements.web / count, worker: statements.worker / count },
        pgTransactionsPerRun: { web: transactions.web / count, worker: transactions.worker / count },
        pgDatabaseXactsPerRun: (xact1 - xact0) / count,
        pgPeakConnections: peaks,
      };
    };

    const long = await measure('~300-token runs', LONG_RUNS, (i) => `${LONG_QUESTION} ${i}`);
    const short = await measure('short runs', SHORT_RUNS, (i) => `hello ${i}`);
    const perToken = (f: (m: typeof long) => number) => (f(long) - f(short)) / (long.tokensPerRun - short.tokensPerRun);

    console.log(`\n(1) per finished run: 1 web + 1 worker, ${CLIENTS} concurrent clients, local model at 15 ms per token (one publish per token), Redis ${config.redis.url.replace(/:\d+$/, '')} of the bench's own`);
    const figures: Record<string, (m: typeof long) => number | string> = {
      'tokens/run': (m) => round(m.tokensPerRun, 1),
      'events/run': (m) => round(m.eventsPerRun, 1),
      'stream bytes/run (MEMORY USAGE)': (m) => round(m.streamBytesPerRun, 0),
      'Redis used_memory Δ/run': (m) => round(m.usedMemoryPerRun, 0),
      'run keys left besides streams': (m) => m.otherRunKeysLeft,
      'stream TTL s (max seen)': (m) => m.maxTtl,
      'Redis commands/run': (m) => round(m.commandsPerRun, 1),
      'Redis round trips (EVALSHA)/run': (m) => round(m.evalshaPerRun, 1),
      'Redis CPU ms/run': (m) => round(m.redisCpuMsPerRun, 3),
      'web CPU ms/run': (m) => round(m.webCpuMsPerRun, 2),
      'worker CPU ms/run': (m) => round(m.workerCpuMsPerRun, 2),
      'PG statements/run (web)': (m) => round(m.pgStatementsPerRun.web, 2),
      'PG statements/run (worker)': (m) => round(m.pgStatementsPerRun.worker, 2),
      'PG transactions/run (web)': (m) => round(m.pgTransactionsPerRun.web, 2),
      'PG transactions/run (worker)': (m) => round(m.pgTransactionsPerRun.worker, 2),
      'pg_stat_database xacts/run (autovacuum included)': (m) => round(m.pgDatabaseXactsPerRun, 2),
      'PG peak connections (web/worker)': (m) => `${m.pgPeakConnections.web}/${m.pgPeakConnections.worker}`,
    };
    console.table(Object.fromEntries(Object.entries(figures).map(([name, figure]) => [name, { [`${long.count} ${long.label}`]: figure(long), [`${short.count} ${short.label}`]: figure(short) }])));
    console.log('Redis commands per ~300-token run, by command (commands a script runs are counted as well as its EVALSHA):');
    console.log(long.commands.map(([cmd, n]) => `${cmd} ${round(n, 2)}`).join(', '));
    const queueKeys = await keysUnder(redis, `${prefix}bull:`);
    const eventsKey = queueKeys.find((k) => k.endsWith(':agent-runs:events'));
    console.log(`The queues' own keys (a fixed cost, not per run): ${queueKeys.length} keys, ${round((await memoryOf(redis, queueKeys)) / 1024, 1)} KiB; the run queue's event log holds ${eventsKey ? await redis.xlen(eventsKey) : 0} entries (BullMQ trims it at about 10,000)`);
    console.log('\n(2) per streamed token (the difference between the two batches, per token of difference)');
    console.table({
      'stream bytes': round(perToken((m) => m.streamBytesPerRun), 1),
      'Redis commands': round(perToken((m) => m.commandsPerRun), 2),
      'Redis round trips (EVALSHA)': round(perToken((m) => m.evalshaPerRun), 2),
      'Redis CPU µs': round(perToken((m) => m.redisCpuMsPerRun) * 1000, 2),
      'web CPU µs': round(perToken((m) => m.webCpuMsPerRun) * 1000, 1),
      'worker CPU µs': round(perToken((m) => m.workerCpuMsPerRun) * 1000, 1),
    });

    // (3) runs/s of one worker process: short answers at zero token delay, back to back.
    await stop(procs.worker);
    procs.worker = await spawnProcess('../workers/main.js', { ...workerEnv, LOCAL_MODEL_TOKEN_DELAY_MS: '0', LOG_LEVEL: 'info' }, /worker ready/);
    const cpuBefore = { web: cpuSeconds(procs.web.pid!), worker: cpuSeconds(procs.worker.pid!) };
    const burst = await runMany(url, key, THROUGHPUT_RUNS, THROUGHPUT_CLIENTS, (i) => `What is ${i}+1?`);
    const busy = (role: keyof Processes) => round((cpuSeconds(procs[role].pid!) - cpuBefore[role]) / burst.seconds, 2);
    console.log(`\n(3) one worker process (WORKER_CONCURRENCY ${config.workerConcurrency}), ${THROUGHPUT_CLIENTS} clients, short answers, zero token delay: ${round(THROUGHPUT_RUNS / burst.seconds, 1)} runs/s; CPU cores busy: web ${busy('web')}, worker ${busy('worker')} (2 cores shared with Redis and Postgres)`);

    // (4) Open streams: no worker, so every run stays queued and its SSE stream stays open.
    await stop(procs.worker);
    await settled();
    webPg.reset();
    const memory0 = info((await redis.info('memory')) as string, 'used_memory');
    const rss0 = rssBytes(procs.web.pid!);
    const controllers: AbortController[] = [];
    while (controllers.length < OPEN_STREAMS) {
      await Promise.all(
        Array.from({ length: Math.min(200, OPEN_STREAMS - controllers.length) }, async () => {
          const controller = new AbortController();
          controllers.push(controller);
          const res = await fetch(`${url}/api/react`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ q: 'hold' }), signal: controller.signal });
          const reader = (res.body as ReadableStream<Uint8Array>).getReader();
          await reader.read();
          void reader.read().catch(() => {});
        }),
      );
    }
    const memory1 = info((await redis.info('memory')) as string, 'used_memory');
    const rss1 = rssBytes(procs.web.pid!);
    const clients = ((await redis.client('LIST')) as string).split('\n').filter((l) => / name=web/.test(l)).length;
    console.log(`\n(4) ${OPEN_STREAMS} open streams of queued runs on one web process`);
    console.table({
      'Redis used_memory per open stream (bytes)': round((memory1 - memory0) / OPEN_STREAMS, 0),
      'web RSS per open stream (KiB)': round((rss1 - rss0) / OPEN_STREAMS / 1024, 1),
      'web Redis connections': clients,
      'web PG connections (peak)': webPg.peak,
    });
    for (const c of controllers) c.abort();
  } finally {
    await Promise.all([stop(procs.web), stop(procs.worker)]);
    await Promise.all([webPg.close(), workerPg.close()]);
    await bench.drop();
    redisServer.child.kill('SIGTERM');
  }
}
