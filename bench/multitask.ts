import type { ChildProcess } from 'node:child_process';
import { benchEnvironment, percentile, readEvents, round, spawnProcess, stop } from './support.js';

/**
 * multitask_strategy `enqueue` (DESIGN §19): how long a queued run waits after the run before it
 * ends — from the active run's `done` to the queued run's first event after `run` (its `status:
 * running`), both read from the same web process — against a fresh run's time from its request to
 * that same first event, interleaved in one run. Target: the handover's p50 ≤ 50 ms.
 */
const PORT = 3961;
const SAMPLES = 60;
const WARM_UP = 5;

interface Stream {
  /** Arrival time (performance.now) of each event type's first occurrence (`status:<status>` for status events). */
  at: Map<string, number>;
  /** The response's headers (X-Conversation-Id). */
  headers: Promise<Headers>;
  /** Resolves at the stream's first `token` event. */
  firstToken: Promise<void>;
  ended: Promise<void>;
}

function react(url: string, key: string, body: Record<string, unknown>): Stream {
  const at = new Map<string, number>();
  let tokenSeen!: () => void;
  const firstToken = new Promise<void>((resolve) => (tokenSeen = resolve));
  const response = fetch(`${url}/api/react`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const ended = response.then((res) =>
    readEvents(res, (event) => {
      const type = event.event === 'status' ? `status:${JSON.parse(event.data).status}` : (event.event ?? '');
      if (!at.has(type)) at.set(type, performance.now());
      if (type === 'token') tokenSeen();
    }),
  );
  return { at, headers: response.then((res) => res.headers), firstToken, ended };
}

/** One pair: an active run with a run enqueued behind it once it streams; the handover in ms. */
async function handover(url: string, key: string): Promise<number> {
  const first = react(url, key, { q: 'Tell me about the weather' });
  const conversationId = (await first.headers).get('x-conversation-id')!;
  await first.firstToken;
  const second = react(url, key, { q: 'What is 6*7?', conversation_id: conversationId, multitask_strategy: 'enqueue' });
  await Promise.all([first.ended, second.ended]);
  const done = first.at.get('done');
  const started = second.at.get('status:running');
  if (done === undefined || started === undefined) throw new Error('a run of the pair did not finish');
  return started - done;
}

/** A fresh run: from its request to its first event after `run`. */
async function fresh(url: string, key: string): Promise<number> {
  const sent = performance.now();
  const run = react(url, key, { q: 'What is 6*7?' });
  await run.ended;
  return run.at.get('status:running')! - sent;
}

export async function multitaskHandoff(): Promise<void> {
  const bench = await benchEnvironment('multitask');
  const started: ChildProcess[] = [];
  try {
    const env = { ...bench.env, PORT: String(PORT), METRICS_ENABLED: 'false', LOCAL_MODEL_TOKEN_DELAY_MS: '5', RUNS_PER_USER_LIMIT: '1000' };
    started.push(await spawnProcess('../src/server.js', env, /web listening/));
    started.push(await spawnProcess('../workers/main.js', env, /worker ready/));
    const url = `http://127.0.0.1:${PORT}`;
    const { key } = await bench.user('multitask@example.test');
    for (let i = 0; i < WARM_UP; i++) await Promise.all([handover(url, key), fresh(url, key)]);
    const handovers: number[] = [];
    const freshRuns: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      if (i % 2 === 0) {
        handovers.push(await handover(url, key));
        freshRuns.push(await fresh(url, key));
      } else {
        freshRuns.push(await fresh(url, key));
        handovers.push(await handover(url, key));
      }
    }
    console.log(`\nmultitask_strategy enqueue: ${SAMPLES} pairs, interleaved with fresh runs (local model, 5 ms a token), ms\n`);
    console.table({
      "queued run: active run's done → its status running": { p50: round(percentile(handovers, 50)), p99: round(percentile(handovers, 99)) },
      'fresh run: request → its status running': { p50: round(percentile(freshRuns, 50)), p99: round(percentile(freshRuns, 99)) },
    });
    console.log(`handover p50 = ${round(percentile(handovers, 50))} ms (target ≤ 50 ms); fresh start p50 = ${round(percentile(freshRuns, 50))} ms`);
  } finally {
    await Promise.all(started.map(stop));
    await bench.drop();
  }
}
