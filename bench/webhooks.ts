import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { benchEnvironment, percentile, postRun, round, spawnProcess, stop } from './support.js';

/**
 * Webhook latency and cost (DESIGN §10): from a run's `done` (as its client sees it) to its
 * signed `run.succeeded` delivery arriving at a receiver on 127.0.0.1, p50/p99 over 500 runs by
 * 20 concurrent clients; and runs/s with a webhook subscribed against the same runs without, in
 * the same run. Targets: p50 ≤ 20 ms; ≥ 0.9 of the rate without.
 */
const PORT = 3932;
const RUNS = 500;
const CLIENTS = 20;
/** The two loads alternate in rounds, so the machine's drift falls on both alike. */
const ROUNDS = 5;

/** A receiver that notes when each run's delivery arrived, and answers 200 at once. */
async function startReceiver() {
  const arrivals = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const runId = (JSON.parse(Buffer.concat(chunks).toString()) as { data: { run_id: string } }).data.run_id;
      arrivals.set(runId, at);
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { arrivals, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`, close: () => server.close() };
}

/** Runs one question to its end; the moment its `done` arrived, by the same clock as the receiver's. */
async function runOnce(url: string, key: string, q: string): Promise<{ runId: string; doneAt: number }> {
  let doneAt = Number.NaN;
  const res = await postRun(url, key, { q }, (e) => e.event === 'done' && (doneAt = performance.now()));
  return { runId: res.headers.get('x-run-id')!, doneAt };
}

interface Load {
  runs: number;
  seconds: number;
  done: Map<string, number>;
}

const emptyLoad = (): Load => ({ runs: 0, seconds: 0, done: new Map() });

/** `runs` runs by CLIENTS clients, back to back, added to `into`: their time and each run's done. */
async function load(url: string, key: string, runs: number, into: Load): Promise<Load> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < runs) {
        const { runId, doneAt } = await runOnce(url, key, `What is ${next++}+1?`);
        into.done.set(runId, doneAt);
      }
    }),
  );
  into.runs += runs;
  into.seconds += (performance.now() - started) / 1000;
  return into;
}

const rate = (l: Load) => l.runs / l.seconds;

export async function run() {
  const bench = await benchEnvironment('webhooks');
  const receiver = await startReceiver();
  const started: ChildProcess[] = [];
  // BENCH_CPU_PROF=<dir> writes V8 CPU profiles of web and worker there.
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  try {
    const env = { ...bench.env, PORT: String(PORT), LOCAL_MODEL_TOKEN_DELAY_MS: '0', RUNS_PER_USER_LIMIT: '100000', LOG_LEVEL: 'info' };
    started.push(await spawnProcess('../src/server.js', env, /web listening/, [], profile));
    started.push(await spawnProcess('../workers/main.js', env, /worker ready/, [], profile));
    const url = `http://127.0.0.1:${PORT}`;
    const plain = await bench.user('plain@example.test');
    const subscribed = await bench.user('subscribed@example.test');
    const created = await fetch(`${url}/api/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${subscribed.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['run.succeeded'] }),
    });
    if (created.status !== 201) throw new Error(`could not subscribe: ${created.status}`);

    await load(url, plain.key, RUNS, emptyLoad()); // warm-up: JIT, pools
    const without = emptyLoad();
    const withWebhook = emptyLoad();
    for (let round = 0; round < ROUNDS; round++) {
      await load(url, plain.key, RUNS / ROUNDS, without);
      await load(url, subscribed.key, RUNS / ROUNDS, withWebhook);
    }
    const deadline = performance.now() + 30_000;
    while ([...withWebhook.done.keys()].some((id) => !receiver.arrivals.has(id)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const latencies = [...withWebhook.done].flatMap(([id, doneAt]) => (receiver.arrivals.has(id) ? [receiver.arrivals.get(id)! - doneAt] : []));

    console.log(`\nwebhooks benchmark: ${RUNS} runs by ${CLIENTS} concurrent clients, local model, one worker`);
    console.table({
      'done → webhook arrival (ms)': { p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)), delivered: `${latencies.length}/${RUNS}` },
    });
    console.table({
      'runs/s without a webhook': round(rate(without), 1),
      'runs/s with a webhook subscribed': round(rate(withWebhook), 1),
    });
    console.log(`done → arrival p50: ${round(percentile(latencies, 50))} ms (target ≤ 20); runs/s with / without: ${round(rate(withWebhook) / rate(without), 3)} (target ≥ 0.9)`);
  } finally {
    await Promise.all(started.map(stop));
    receiver.close();
    await bench.drop();
  }
}
