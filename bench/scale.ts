import type { ChildProcess } from 'node:child_process';
import { Redis, type Cluster } from 'ioredis';
import { loadConfig } from '../src/config.js';
import { createRedis } from '../src/redis/connection.js';
import { ThrowawayRedisCluster } from '../test/support/redis-cluster.js';
import { benchEnvironment, percentile, round, spawnProcess, stop, timedRun } from './support.js';

/**
 * Redis Cluster scale-out (DESIGN §13): completed runs/s and first-token p50 for 1 web + 1 worker
 * on a single Redis and on a throwaway three-node cluster in the same run, then 2 web + 2 workers
 * on the cluster; Redis memory per finished run and per open stream on each.
 */
const BASE_PORT = 3960;
const USERS = 24;
const WARM_UP = 40;
const SEQUENTIAL = 150;
const CONCURRENT_CLIENTS = 40;
const THROUGHPUT_RUNS = 1500;
const MEMORY_RUNS = 300;
const OPEN_STREAMS = 600;

interface Setup {
  label: string;
  env: Record<string, string>;
  webs: number;
  workers: number;
  /** Bytes in use on the Redis (summed over the masters of a cluster). */
  usedMemory: () => Promise<number>;
}

async function usedMemoryOf(nodes: Redis[]): Promise<number> {
  const infos = await Promise.all(nodes.map((node) => node.info('memory')));
  return infos.reduce((sum, info) => sum + Number(/used_memory:(\d+)/.exec(info)![1]), 0);
}

/** Opens `count` runs' streams (no worker: each run stays queued, its stream open) and resolves once each has its `run` event. */
async function openStreams(urls: string[], keys: string[], count: number): Promise<AbortController[]> {
  const controllers: AbortController[] = [];
  for (let opened = 0; opened < count; opened += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, count - opened) }, async (_, i) => {
        const controller = new AbortController();
        controllers.push(controller);
        const res = await fetch(`${urls[i % urls.length]}/api/react`, { method: 'POST', headers: { authorization: `Bearer ${keys[(opened + i) % keys.length]}`, 'content-type': 'application/json' }, body: JSON.stringify({ q: 'hold' }), signal: controller.signal });
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        await reader.read();
        void reader.read().catch(() => {});
      }),
    );
  }
  return controllers;
}

async function measure(setup: Setup, keys: string[], portOffset: number) {
  const urls = Array.from({ length: setup.webs }, (_, i) => `http://127.0.0.1:${BASE_PORT + portOffset + i}`);
  const webs: ChildProcess[] = [];
  const workers: ChildProcess[] = [];
  try {
    for (let i = 0; i < setup.webs; i++) webs.push(await spawnProcess('../src/server.js', { ...setup.env, PORT: String(BASE_PORT + portOffset + i) }, /web listening/));
    for (let i = 0; i < setup.workers; i++) workers.push(await spawnProcess('../workers/main.js', setup.env, /worker ready/));
    const pick = (i: number) => ({ url: urls[i % urls.length]!, key: keys[i % keys.length]! });
    for (let i = 0; i < WARM_UP; i++) await timedRun(pick(i).url, pick(i).key, `warm-up ${i}*2`);
    const sequential = [];
    for (let i = 0; i < SEQUENTIAL; i++) sequential.push(await timedRun(pick(i).url, pick(i).key, `What is ${i}*7?`));
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENT_CLIENTS }, async () => {
        while (next < THROUGHPUT_RUNS) {
          const i = next++;
          await timedRun(pick(i).url, pick(i).key, `What is ${i}+1?`);
        }
      }),
    );
    const runsPerSecond = THROUGHPUT_RUNS / ((performance.now() - started) / 1000);
    // Memory per finished run: what a run leaves behind (its stream and sequence hash, until their TTL; BullMQ's record of the job).
    const beforeRuns = await setup.usedMemory();
    for (let i = 0; i < MEMORY_RUNS; i += CONCURRENT_CLIENTS) {
      await Promise.all(Array.from({ length: Math.min(CONCURRENT_CLIENTS, MEMORY_RUNS - i) }, (_, j) => timedRun(pick(i + j).url, pick(i + j).key, `What is ${i + j}-1?`)));
    }
    const perFinishedRun = ((await setup.usedMemory()) - beforeRuns) / MEMORY_RUNS;
    // Memory per open stream: runs held queued (workers stopped), each with an open SSE stream.
    await Promise.all(workers.map(stop));
    const beforeStreams = await setup.usedMemory();
    const held = await openStreams(urls, keys, OPEN_STREAMS);
    const perOpenStream = ((await setup.usedMemory()) - beforeStreams) / OPEN_STREAMS;
    for (const controller of held) controller.abort();
    return {
      setup: setup.label,
      'runs/s': round(runsPerSecond, 1),
      'first token p50 ms': round(percentile(sequential.map((s) => s.firstToken), 50)),
      'done p50 ms': round(percentile(sequential.map((s) => s.done), 50)),
      'Redis bytes / finished run': Math.round(perFinishedRun),
      'Redis bytes / open stream': Math.round(perOpenStream),
    };
  } finally {
    await Promise.all([...webs, ...workers].map(stop));
  }
}

/** `npm run bench -- scale` */
export async function run() {
  const bench = await benchEnvironment('scale');
  const cluster = await ThrowawayRedisCluster.start({ durable: false });
  const clusterEnv = { ...bench.env, REDIS_CLUSTER_NODES: cluster.nodeList };
  const clusterClient = createRedis(loadConfig(clusterEnv).redis, 'patient', 'bench-cluster') as Cluster;
  const single = new Redis(bench.config.redis.url);
  try {
    const users = await Promise.all(Array.from({ length: USERS }, (_, i) => bench.user(`scale-${i}@example.test`)));
    const keys = users.map((u) => u.key);
    const common = { LOCAL_MODEL_TOKEN_DELAY_MS: '0', LOG_LEVEL: 'info', RUNS_PER_USER_LIMIT: '100000' };
    const singleEnv = { ...bench.env, ...common, REDIS_URL: bench.config.redis.url };
    const onCluster = { ...clusterEnv, ...common };
    await clusterClient.cluster('INFO');
    const masters = () => usedMemoryOf(clusterClient.nodes('master'));
    const rows = [];
    rows.push(await measure({ label: '1 web + 1 worker, single Redis', env: singleEnv, webs: 1, workers: 1, usedMemory: () => usedMemoryOf([single]) }, keys, 0));
    rows.push(await measure({ label: '1 web + 1 worker, 3-node cluster', env: onCluster, webs: 1, workers: 1, usedMemory: masters }, keys, 2));
    rows.push(await measure({ label: '2 web + 2 workers, 3-node cluster', env: onCluster, webs: 2, workers: 2, usedMemory: masters }, keys, 4));
    console.log(`\nRedis Cluster scale-out: ${THROUGHPUT_RUNS} runs by ${CONCURRENT_CLIENTS} clients (${USERS} users), first token over ${SEQUENTIAL} sequential runs, local model at zero token delay`);
    console.table(rows);
    const [one, clustered, twoByTwo] = rows as [(typeof rows)[number], (typeof rows)[number], (typeof rows)[number]];
    console.log(`cluster / single (1+1) runs/s: ${round(clustered['runs/s'] / one['runs/s'])} (target ≥ 0.8); first token p50: ${round(clustered['first token p50 ms'] / one['first token p50 ms'])}×`);
    console.log(`2+2 / 1+1 on the cluster runs/s: ${round(twoByTwo['runs/s'] / clustered['runs/s'])} (on 2 cores expect little)`);
    console.log('Redis memory: shared single Redis figures include whatever else runs on it; the cluster is the bench\'s own');
  } finally {
    single.disconnect();
    clusterClient.disconnect();
    await cluster.destroy();
    await bench.drop();
  }
}
