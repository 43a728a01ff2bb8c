import type { ChildProcess } from 'node:child_process';
import { benchEnvironment, percentile, readEvents, round, spawnProcess, stop } from './support.js';

/**
 * Time from `kill -9` of the worker holding a run to the first event of the resumed run, p50
 * over 20 trials, and the events duplicated or missing across the crash (must be 0). One web
 * process, two workers; the killed one is replaced after each trial.
 */
const PORT = 3919;
const TRIALS = 20;
const JOB_LOCK_MS = 2000;
const STALLED_INTERVAL_MS = 1000;

interface Event {
  id: string;
  type: string;
  data: string;
}

interface Worker {
  child: ChildProcess;
  output: string;
}

async function startWorker(env: Record<string, string>): Promise<Worker> {
  const child = await spawnProcess('../workers/main.js', env, /worker ready/);
  const worker = { child, output: '' };
  child.stdout!.on('data', (chunk: Buffer) => (worker.output += chunk.toString()));
  return worker;
}

/** Reads an SSE response to its end; `onEvent` sees each event as it arrives. */
async function collectEvents(res: Response, onEvent: (event: Event) => void = () => {}): Promise<Event[]> {
  const events: Event[] = [];
  await readEvents(res, (e) => {
    const event = { id: e.id ?? '', type: e.event ?? 'message', data: e.data };
    events.push(event);
    onEvent(event);
  });
  return events;
}

/** Events the client saw twice, and events of the kept stream it never saw. */
function compare(seen: Event[], kept: Event[]): { duplicated: number; missing: number; tokensMatchAnswer: boolean } {
  const seenIds = seen.map((e) => e.id);
  const duplicated = seenIds.length - new Set(seenIds).size;
  const missing = kept.filter((e) => !seenIds.includes(e.id)).length;
  const tokens = seen.filter((e) => e.type === 'token').map((e) => (JSON.parse(e.data) as { text: string }).text).join('');
  const answer = seen.find((e) => e.type === 'answer');
  return { duplicated, missing, tokensMatchAnswer: answer !== undefined && (JSON.parse(answer.data) as { content: string }).content === tokens };
}

export async function run() {
  const bench = await benchEnvironment('recovery');
  const env = {
    ...bench.env,
    PORT: String(PORT),
    LOG_LEVEL: 'info',
    LOCAL_MODEL_TOKEN_DELAY_MS: '50',
    JOB_LOCK_MS: String(JOB_LOCK_MS),
    JOB_STALLED_INTERVAL_MS: String(STALLED_INTERVAL_MS),
  };
  const { key } = await bench.user('recovery@example.test');
  const url = `http://127.0.0.1:${PORT}`;
  const web = await spawnProcess('../src/server.js', env, /web listening/);
  let workers: Worker[] = await Promise.all([startWorker(env), startWorker(env)]);
  const recoveries: number[] = [];
  let duplicated = 0;
  let missing = 0;
  let garbled = 0;
  try {
    for (let trial = 0; trial < TRIALS; trial++) {
      let runId = '';
      let killedAt = 0;
      let resumedAfter = NaN;
      let victim: Worker | undefined;
      const res = await fetch(`${url}/api/react`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ q: `What is ${trial}*7?` }) });
      const seen = await collectEvents(res, (event) => {
        if (event.type === 'run') runId = (JSON.parse(event.data) as { run_id: string }).run_id;
        if (event.type === 'token' && !victim) {
          // The worker that made the run's tool call holds it.
          victim = workers.find((w) => w.output.includes(runId));
          victim?.child.kill('SIGKILL');
          killedAt = performance.now();
        } else if (killedAt && Number.isNaN(resumedAfter)) {
          resumedAfter = performance.now() - killedAt;
        }
      });
      if (!victim) throw new Error(`trial ${trial}: no worker logged run ${runId}`);
      recoveries.push(resumedAfter);
      const kept = await collectEvents(await fetch(`${url}/api/runs/${runId}/events`, { headers: { authorization: `Bearer ${key}` } }));
      const result = compare(seen, kept);
      duplicated += result.duplicated;
      missing += result.missing;
      if (!result.tokensMatchAnswer) garbled += 1;
      workers = [...workers.filter((w) => w !== victim), await startWorker(env)];
    }
    console.log(`\nrecovery after kill -9 of the worker holding a run (${TRIALS} trials; JOB_LOCK_MS=${JOB_LOCK_MS}, JOB_STALLED_INTERVAL_MS=${STALLED_INTERVAL_MS})`);
    console.table([{ 'p50 ms': round(percentile(recoveries, 50)), 'p90 ms': round(percentile(recoveries, 90)), 'max ms': round(Math.max(...recoveries)), 'lock + stall interval ms': JOB_LOCK_MS + STALLED_INTERVAL_MS }]);
    console.log(`events duplicated: ${duplicated}; events missing: ${missing}; runs whose tokens did not spell the answer: ${garbled} (target: all 0)`);
  } finally {
    await Promise.all([stop(web), ...workers.map((w) => stop(w.child))]);
    await bench.drop();
  }
}
