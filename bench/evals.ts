import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchEnvironment, percentile, round, seededRandom, spawnProcess, stop } from './support.js';
import { meterCpu, type CpuReading } from './cpu.js';
import { PgCounter } from './pg-counter.js';
import { scoreAnswer, type Answer, type Judge } from '../workers/evals/scoring.js';
import type { Scorer } from '../src/evals/scorers.js';

/**
 * Evals (DESIGN §24, issue 37), each figure against a baseline measured in the same run.
 *
 * Part 1, throughput: one web and one worker (the deployment's defaults: RUNS_PER_USER_LIMIT 20,
 * WORKER_CONCURRENCY 50, EVAL_DRIVERS_PER_WORKER 16; the local model at zero token delay, as the
 * other run benches). Plain: ITEMS background runs of one agent by 20 client lanes (POST /api/runs,
 * then GET ?wait=60 until final, then the next): runs/s from the first POST to the last final. Eval:
 * a dataset of ITEMS questions of the same kind, at concurrency 20, scorers contains + numeric +
 * llm_judge(local): items/s from POST /api/evals to `succeeded` (GET every 100 ms). Two rounds,
 * plain, eval, eval, plain (BENCH_EVAL_ROUNDS=4: eight rounds,
 * ABBA BAAB), so warm-up falls on both alike; web, worker and Postgres CPU per item beside each. Target eval / plain ≥ 0.9.
 * An eval that ends `failed` is reported and run again (its time not counted), so a flaky failure
 * still leaves figures; the count of such evals is printed at the end.
 *
 * Part 1b, statements: Postgres statements and transactions per item, plain against eval, counted by
 * a proxy (bench/pg-counter.ts) for the web and one for the worker, on processes of their own.
 *
 * Part 2, scoring cost: `scoreAnswer` in process over realistic answers, µs per item per scorer type
 * and for all seven at once; and the eval's end-to-end overhead per item from part 1.
 *
 * Part 3, crash: a web and worker A; an eval of CRASH_ITEMS items at concurrency 20 starts on A (its
 * driver job can only be on A), then worker B starts; past ~30% done A is killed -9 and a replacement
 * starts. Once the eval has ended, from Postgres: items lost (not scored/failed) and scored twice
 * (`evals.done` against the finished items; runs of the eval not referenced by exactly one item).
 * Target 0 and 0. An eval not ended CRASH_DEADLINE_S after the kill is given up on: its open items
 * are listed with their runs' statuses, counted as lost, and the eval is cancelled.
 *
 * `npm run bench -- evals [throughput|statements|scoring|crash]`; BENCH_QUICK=1 for 200 items (crash 100).
 */
const QUICK = process.env.BENCH_QUICK === '1';
const ITEMS = QUICK ? 200 : 1000;
const CRASH_ITEMS = QUICK ? 100 : 300;
const CONCURRENCY = 20;
const PORT = 3981;
const CRASH_PORT = 3982;
const POLL_MS = 100;
/** Runs slow enough (about 2 s each) that worker B is up and ~30% is done while the eval is far from over. */
const CRASH_TOKEN_DELAY_MS = 200;
/** How long after the kill the eval may take to end before it is counted as stuck. */
const CRASH_DEADLINE_S = 120;
const JOB_LOCK_MS = 2000;
const STALLED_INTERVAL_MS = 1000;
/** The other run benches' token delay: the platform's own cost is what is measured, not the model's pace. */
const TOKEN_DELAY_MS = process.env.BENCH_TOKEN_DELAY_MS ?? '0';
const SCORERS: Scorer[] = [{ type: 'contains' }, { type: 'numeric' }, { type: 'llm_judge', model: 'local', rubric: 'The answer gives the expected number.' }];
/** Alternating, so warm-up and drift (other work on this shared machine) fall on both alike. */
const ORDER = (process.env.BENCH_EVAL_ROUNDS === '4' ? ['plain', 'eval', 'eval', 'plain', 'eval', 'plain', 'plain', 'eval'] : ['plain', 'eval', 'eval', 'plain']) as ('plain' | 'eval')[];
const FINAL = ['succeeded', 'failed', 'cancelled', 'interrupted'];

type Bench = Awaited<ReturnType<typeof benchEnvironment>>;

/** The process's warn and error log lines (pino levels 40, 50, 60), printed as they come: a failed eval says why here. */
function surfaceProblems(child: ChildProcess, name: string): ChildProcess {
  let rest = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) if (/"level":(40|50|60)/.test(line)) console.log(`[${name}] ${line.slice(0, 2000)}`);
  });
  return child;
}

interface Client {
  url: string;
  key: string;
}

async function call<T>(client: Client, method: string, path: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }> {
  const res = await fetch(`${client.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${client.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
}

async function expectOk<T>(client: Client, method: string, path: string, body?: unknown): Promise<T> {
  const res = await call<T>(client, method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** `count` questions "What is a*b?" with their products, the same every run. */
function questions(count: number, seed: number): { q: string; expected: string }[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const a = 2 + Math.floor(random() * 998);
    const b = 2 + Math.floor(random() * 98);
    return { q: `What is ${a}*${b}?`, expected: String(a * b) };
  });
}

async function dataset(client: Client, name: string, count: number, seed: number): Promise<string> {
  const { id } = await expectOk<{ id: string }>(client, 'POST', '/api/datasets', { name });
  await expectOk(client, 'POST', `/api/datasets/${id}/items`, questions(count, seed).map(({ q, expected }) => ({ input: { q }, expected })));
  return id;
}

interface PlainResult {
  seconds: number;
  perSecond: number;
  refused: number;
  notSucceeded: number;
}

/** `total` background runs by CONCURRENCY lanes, each POST then GET ?wait=60 until final; a 429 (the user's active-run cap) is tried again after 250 ms, as the eval driver does. */
async function plainRuns(client: Client, agentId: string, total: number, seed: number): Promise<PlainResult> {
  const qs = questions(total, seed);
  let next = 0;
  let refused = 0;
  let notSucceeded = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) {
        const { q } = qs[next++]!;
        let runId: string;
        for (;;) {
          const res = await call<{ run_id: string }>(client, 'POST', '/api/runs', { mode: 'react', q, agent_id: agentId });
          if (res.status === 202) {
            runId = res.body.run_id;
            break;
          }
          if (res.status !== 429) throw new Error(`POST /api/runs: ${res.status} ${JSON.stringify(res.body)}`);
          refused++;
          await sleep(250);
        }
        let status = '';
        while (!FINAL.includes(status)) status = (await expectOk<{ status: string }>(client, 'GET', `/api/runs/${runId}?wait=60`)).status;
        if (status !== 'succeeded') notSucceeded++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { seconds, perSecond: total / seconds, refused, notSucceeded };
}

interface EvalRecord {
  id: string;
  status: string;
  progress: { done: number; failed: number; total: number };
  summary: Record<string, number | null>;
  pass_rate: number | null;
}

/** Polls the eval every POLL_MS until it is final (or `onProgress` is told each reading). */
class GaveUp extends Error {}

async function untilEvalEnds(client: Client, id: string, onProgress: (record: EvalRecord) => void | Promise<void> = () => {}): Promise<EvalRecord> {
  for (;;) {
    const record = await expectOk<EvalRecord>(client, 'GET', `/api/evals/${id}`);
    try {
      await onProgress(record);
    } catch (err) {
      if (err instanceof GaveUp) return record;
      throw err;
    }
    if (!['queued', 'running'].includes(record.status)) return record;
    await sleep(POLL_MS);
  }
}

interface EvalResult {
  id: string;
  seconds: number;
  perSecond: number;
  record: EvalRecord;
}

/** Evals that ended `failed` on the way (each tried again), with their error: a finding, not a figure. */
const failedEvals: string[] = [];
const EVAL_ATTEMPTS = 4;

/** An eval to `succeeded`: one that fails is reported and run again (EVAL_ATTEMPTS at most), its time not counted. */
async function evalRun(client: Client, datasetId: string, agentId: string): Promise<EvalResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await evalOnce(client, datasetId, agentId);
    } catch (err) {
      const message = (err as Error).message;
      if (!message.includes(' ended ') || attempt >= EVAL_ATTEMPTS) throw err;
      failedEvals.push(message.slice(0, 600));
      console.log(`!! ${message.slice(0, 600)} — run again`);
    }
  }
}

async function evalOnce(client: Client, datasetId: string, agentId: string): Promise<EvalResult> {
  const started = performance.now();
  const created = await expectOk<EvalRecord>(client, 'POST', '/api/evals', { dataset_id: datasetId, agent_id: agentId, scorers: SCORERS, concurrency: CONCURRENCY });
  const record = await untilEvalEnds(client, created.id);
  const seconds = (performance.now() - started) / 1000;
  if (record.status !== 'succeeded') {
    const items = await expectOk<{ items: unknown[] }>(client, 'GET', `/api/evals/${created.id}/results?size=100`);
    const failed = (items.items as { status: string; error: unknown }[]).filter((i) => i.status !== 'scored').slice(0, 3);
    throw new Error(`eval ${created.id} ended ${record.status}: ${JSON.stringify(record)}; items not scored: ${JSON.stringify(failed)}`);
  }
  return { id: created.id, seconds, perSecond: record.progress.total / seconds, record };
}

/** Where an eval's time went, from its rows: item runs' durations and the gaps a lane spends between one item's run ending and its next item taken. */
async function evalTimeline(bench: Bench, evalId: string) {
  const { rows } = await bench.knex.raw(
    `select extract(epoch from (i.started_at - e.started_at)) * 1000 as taken_ms,
            extract(epoch from (r.created_at - i.started_at)) * 1000 as take_to_run_row_ms,
            extract(epoch from (r.finished_at - r.created_at)) * 1000 as run_ms,
            extract(epoch from (i.finished_at - r.finished_at)) * 1000 as run_end_to_scored_ms
     from eval_items i join evals e on e.id = i.eval_id left join runs r on r.id = i.run_id
     where i.eval_id = ?`,
    [evalId],
  );
  const typed = rows as Record<string, string | null>[];
  const column = (name: string) => typed.map((r) => Number(r[name])).filter(Number.isFinite);
  const span = await bench.knex('evals').where({ id: evalId }).first(bench.knex.raw('extract(epoch from (finished_at - started_at)) as s'), bench.knex.raw('extract(epoch from (started_at - created_at)) * 1000 as queued_ms'));
  return {
    'queued → driver began ms': round(Number(span.queued_ms), 1),
    'driver began → ended s': round(Number(span.s), 2),
    'item taken → run row p50 ms': round(percentile(column('take_to_run_row_ms'), 50), 1),
    'run row → run finished p50 ms': round(percentile(column('run_ms'), 50), 1),
    'run row → run finished p90 ms': round(percentile(column('run_ms'), 90), 1),
    'run finished → item scored p50 ms': round(percentile(column('run_end_to_scored_ms'), 50), 1),
    'run finished → item scored p90 ms': round(percentile(column('run_end_to_scored_ms'), 90), 1),
  };
}

async function plainTimeline(bench: Bench, userId: string, since: Date) {
  const { rows } = await bench.knex.raw(
    `select extract(epoch from (finished_at - created_at)) * 1000 as run_ms from runs where user_id = ? and created_at >= ? and eval_id is null`,
    [userId, since],
  );
  const ms = (rows as { run_ms: string }[]).map((r) => Number(r.run_ms));
  return { 'run row → run finished p50 ms': round(percentile(ms, 50), 1), 'run row → run finished p90 ms': round(percentile(ms, 90), 1) };
}

interface Throughput {
  plainSeconds: number;
  evalSeconds: number;
  items: number;
}

/** Part 1: plain background runs against an eval of as many items, plain, eval, eval, plain. */
async function throughput(bench: Bench, started: ChildProcess[]): Promise<Throughput> {
  const env = { ...bench.env, PORT: String(PORT), LOG_LEVEL: 'warn', LOCAL_MODEL_TOKEN_DELAY_MS: TOKEN_DELAY_MS };
  const web = surfaceProblems(await spawnProcess('../src/server.js', { ...env, LOG_LEVEL: 'info' }, /web listening/), 'web');
  started.push(web);
  const worker = surfaceProblems(await spawnProcess('../workers/main.js', { ...env, LOG_LEVEL: 'info' }, /worker ready/), 'worker');
  started.push(worker);
  const { user, key } = await bench.user('evals@example.test');
  const client = { url: `http://127.0.0.1:${PORT}`, key };
  const agent = await expectOk<{ id: string }>(client, 'POST', '/api/agents', { name: 'bench agent', instructions: 'Answer arithmetic with the calculator.' });
  const datasetId = await dataset(client, 'bench arithmetic', ITEMS, 37);

  // Warm-up, unmeasured: a few plain runs and a small eval, so neither side pays the first compilations.
  const warmDataset = await dataset(client, 'warm-up', 40, 1);
  await plainRuns(client, agent.id, 40, 2);
  await evalRun(client, warmDataset, agent.id);

  const rows: Record<string, Record<string, number | string>> = {};
  const timelines: Record<string, Record<string, number>> = {};
  const summaries: string[] = [];
  let plainSeconds = 0;
  let evalSeconds = 0;
  const cpu: Record<'plain' | 'eval', CpuReading> = { plain: { web: 0, worker: 0, postgres: 0, redis: 0 }, eval: { web: 0, worker: 0, postgres: 0, redis: 0 } };
  const cpuMs = (reading: CpuReading) => ({ 'web CPU ms/item': round((reading.web * 1000) / ITEMS, 2), 'worker CPU ms/item': round((reading.worker * 1000) / ITEMS, 2), 'pg CPU ms/item': round((reading.postgres * 1000) / ITEMS, 2) });
  let round_ = 0;
  for (const kind of ORDER) {
    round_++;
    const metered = await meterCpu({ web: web.pid!, worker: worker.pid!, knex: bench.knex, redis: bench.redis });
    if (kind === 'plain') {
      const since = new Date(Date.now() - 1000);
      const result = await plainRuns(client, agent.id, ITEMS, 100 + round_);
      const used = await metered();
      plainSeconds += result.seconds;
      for (const k of Object.keys(used) as (keyof CpuReading)[]) cpu.plain[k] += used[k];
      rows[`${round_}. plain runs`] = { s: round(result.seconds, 2), 'per s': round(result.perSecond, 1), ...cpuMs(used), '429s retried': result.refused, 'not succeeded': result.notSucceeded };
      timelines[`${round_}. plain runs`] = await plainTimeline(bench, user.id, since);
    } else {
      const result = await evalRun(client, datasetId, agent.id);
      const used = await metered();
      evalSeconds += result.seconds;
      for (const k of Object.keys(used) as (keyof CpuReading)[]) cpu.eval[k] += used[k];
      rows[`${round_}. eval items`] = { s: round(result.seconds, 2), 'per s': round(result.perSecond, 1), ...cpuMs(used), '429s retried': '-', 'not succeeded': result.record.progress.failed };
      summaries.push(JSON.stringify(result.record.summary));
      timelines[`${round_}. eval items`] = await evalTimeline(bench, result.id);
    }
  }
  console.log(`\nevals, part 1: ${ITEMS} plain background runs (20 client lanes) against an eval of ${ITEMS} items (concurrency ${CONCURRENCY}; ${SCORERS.map((s) => s.type).join(' + ')}); one web, one worker, LOCAL_MODEL_TOKEN_DELAY_MS=${TOKEN_DELAY_MS}\n`);
  console.table(rows);
  console.log("\nwhere the time went (from the rows: a run's row is written by whoever starts it, the web for plain runs, the eval's driver for items)");
  console.table(timelines);
  console.log(`eval summaries: ${[...new Set(summaries)].join(' ')}`);
  const rounds = ORDER.length / 2;
  const plainRate = (rounds * ITEMS) / plainSeconds;
  const evalRate = (rounds * ITEMS) / evalSeconds;
  const perItem = (kind: 'plain' | 'eval') => cpuMs({ web: cpu[kind].web / rounds, worker: cpu[kind].worker / rounds, postgres: cpu[kind].postgres / rounds, redis: 0 });
  console.log(`plain ${round(plainRate, 1)} runs/s; eval ${round(evalRate, 1)} items/s; eval / plain = ${round(evalRate / plainRate, 3)} (target ≥ 0.9)`);
  console.log(`CPU per item, plain ${JSON.stringify(perItem('plain'))}; eval ${JSON.stringify(perItem('eval'))}; web+worker+pg eval / plain = ${round((cpu.eval.web + cpu.eval.worker + cpu.eval.postgres) / (cpu.plain.web + cpu.plain.worker + cpu.plain.postgres), 3)}`);
  return { plainSeconds: plainSeconds / rounds, evalSeconds: evalSeconds / rounds, items: ITEMS };
}

const STATEMENT_ITEMS = 100;

/**
 * Part 1b: Postgres statements and transactions per item, plain against eval, counted by a proxy in
 * front of Postgres for the web and one for the worker (a web and worker of their own: the proxy
 * costs time, so it is not in part 1's timings). The eval's count includes its GETs every 100 ms.
 */
async function statements(bench: Bench, started: ChildProcess[]): Promise<void> {
  const database = new URL(bench.config.databaseUrl);
  const target = { host: database.hostname, port: Number(database.port || 5432) };
  const webPg = new PgCounter(target);
  const workerPg = new PgCounter(target);
  const through = (port: number) => Object.assign(new URL(database), { hostname: '127.0.0.1', port: String(port) }).toString();
  const [webPort, workerPort] = await Promise.all([webPg.start(), workerPg.start()]);
  const env = { ...bench.env, PORT: String(PORT + 10), LOG_LEVEL: 'info', LOCAL_MODEL_TOKEN_DELAY_MS: TOKEN_DELAY_MS };
  try {
    started.push(surfaceProblems(await spawnProcess('../src/server.js', { ...env, DATABASE_URL: through(webPort) }, /web listening/), 'web'));
    started.push(surfaceProblems(await spawnProcess('../workers/main.js', { ...env, DATABASE_URL: through(workerPort) }, /worker ready/), 'worker'));
    const { key } = await bench.user('evals-statements@example.test');
    const client = { url: `http://127.0.0.1:${PORT + 10}`, key };
    const agent = await expectOk<{ id: string }>(client, 'POST', '/api/agents', { name: 'statements agent' });
    const datasetId = await dataset(client, 'statements', STATEMENT_ITEMS, 5);
    await plainRuns(client, agent.id, 20, 6);
    await evalRun(client, await dataset(client, 'statements warm-up', 20, 7), agent.id);
    const count = async (work: () => Promise<unknown>) => {
      webPg.reset();
      workerPg.reset();
      await work();
      await sleep(500);
      const per = (n: number) => round(n / STATEMENT_ITEMS, 2);
      return { 'web statements/item': per(webPg.statements), 'web transactions/item': per(webPg.transactions), 'worker statements/item': per(workerPg.statements), 'worker transactions/item': per(workerPg.transactions) };
    };
    const plain = await count(() => plainRuns(client, agent.id, STATEMENT_ITEMS, 8));
    let evalSeconds = 0;
    const evaluated = await count(async () => (evalSeconds = (await evalRun(client, datasetId, agent.id)).seconds));
    console.log(`\nevals, part 1b: Postgres statements per item (${STATEMENT_ITEMS} plain runs, then an eval of ${STATEMENT_ITEMS} items), counted by a proxy; the eval's web count holds its ~${Math.round((evalSeconds * 1000) / POLL_MS)} GETs of the eval\n`);
    console.table({ plain, eval: evaluated });
  } finally {
    for (const child of started.splice(0).reverse()) await stop(child);
    await Promise.all([webPg.close(), workerPg.close()]);
  }
}

/** Realistic answers for each scorer type, as the local model and a gateway model give them. */
function scoringCases(): { scorer: Scorer; item: { question: string; expected: unknown }; answers: Answer[] }[] {
  const qs = questions(256, 9);
  const prose = (q: string, n: string, i: number) =>
    i % 4 === 0 ? `${n}` : i % 4 === 1 ? `The calculator gives ${n}. So ${q.replace(/^What is |\?$/g, '')} = ${n}.` : i % 4 === 2 ? `Let me work this out step by step. ${q} Multiplying the two numbers gives ${Number(n).toLocaleString('en')}, which is the final answer.` : `I'm not sure, maybe ${Number(n) + 1}?`;
  const texts = qs.map(({ q, expected }, i) => ({ text: prose(q, expected, i), output: null, citations: [] }));
  const item = { question: qs[0]!.q, expected: qs[0]!.expected };
  const schema = { type: 'object', properties: { answer: { type: 'number' }, unit: { type: 'string' } }, required: ['answer'], additionalProperties: false };
  const jsonAnswers: Answer[] = qs.map(({ expected }, i) => ({ text: i % 2 ? '```json\n{"answer": ' + expected + ', "unit": "none"}\n```' : `{"answer": ${expected}}`, output: null, citations: [] }));
  const cited: Answer[] = qs.map((_, i) => ({ text: 'According to "handbook.pdf": "The refund window is 30 days."', output: null, citations: Array.from({ length: i % 3 }, (_, j) => ({ document_id: `d${j}`, document_name: 'handbook.pdf', chunk_index: j, score: 0.8 })) }));
  return [
    { scorer: { type: 'exact' }, item, answers: texts },
    { scorer: { type: 'contains' }, item, answers: texts },
    { scorer: { type: 'regex', pattern: '\\b\\d{2,6}\\b' }, item, answers: texts },
    { scorer: { type: 'numeric' }, item, answers: texts },
    { scorer: { type: 'json_schema', schema } as Scorer, item, answers: jsonAnswers },
    { scorer: { type: 'cites', min: 2 }, item, answers: cited },
    { scorer: { type: 'llm_judge', model: 'local', rubric: 'The answer gives the expected number.' }, item, answers: texts },
  ];
}

/** Part 2: scoreAnswer in process, µs per item, each scorer alone and the seven together. */
async function scoringCost(part1: Throughput | undefined): Promise<void> {
  const judge: Judge = async () => 0;
  const cases = scoringCases();
  const iterations = QUICK ? 5000 : 20_000;
  const measure = async (scorers: Scorer[], item: { question: string; expected: unknown }, answers: Answer[]) => {
    for (let i = 0; i < 2000; i++) await scoreAnswer(scorers, item, answers[i % answers.length]!, judge);
    const samples: number[] = [];
    for (let r = 0; r < 5; r++) {
      const t = performance.now();
      for (let i = 0; i < iterations; i++) await scoreAnswer(scorers, item, answers[i % answers.length]!, judge);
      samples.push(((performance.now() - t) * 1000) / iterations);
    }
    return { median: percentile(samples, 50), min: Math.min(...samples) };
  };
  const rows: Record<string, Record<string, number>> = {};
  for (const { scorer, item, answers } of cases) {
    const { median, min } = await measure([scorer], item, answers);
    rows[scorer.type] = { 'µs / item (median of 5)': round(median, 2), 'µs / item (best)': round(min, 2) };
  }
  // All seven on one item: the prose answers (json_schema and cites then score 0, as they would on such answers).
  const all = cases.map((c) => c.scorer);
  const whole = await measure(all, cases[0]!.item, cases[0]!.answers);
  rows['all seven together'] = { 'µs / item (median of 5)': round(whole.median, 2), 'µs / item (best)': round(whole.min, 2) };
  const used = await measure(SCORERS, cases[0]!.item, cases[0]!.answers);
  rows["part 1's set (contains + numeric + llm_judge local)"] = { 'µs / item (median of 5)': round(used.median, 2), 'µs / item (best)': round(used.min, 2) };
  console.log(`\nevals, part 2: scoreAnswer in process (dist/workers/evals/scoring.js), ${iterations} items × 5 per row, after 2,000 unmeasured\n`);
  console.table(rows);
  if (part1) {
    const overheadMs = ((part1.evalSeconds - part1.plainSeconds) * 1000) / part1.items;
    console.log(`eval end-to-end overhead per item over a plain run (mean of the two rounds each, wall time / items): ${round(overheadMs, 3)} ms (scoring's share: ${round(used.median / 1000, 4)} ms)`);
  }
}

interface Worker {
  child: ChildProcess;
  output: string;
  name: string;
}

async function startWorker(env: Record<string, string>, name: string): Promise<Worker> {
  const child = surfaceProblems(await spawnProcess('../workers/main.js', env, /worker ready/), `worker ${name}`);
  const worker = { child, output: '', name };
  child.stdout!.on('data', (chunk: Buffer) => (worker.output += chunk.toString()));
  return worker;
}

/** Part 3: kill -9 of the worker driving an eval mid-way; items lost and scored twice, from Postgres. */
async function crash(bench: Bench, started: ChildProcess[]): Promise<void> {
  const env = {
    ...bench.env,
    PORT: String(CRASH_PORT),
    LOG_LEVEL: 'info',
    LOCAL_MODEL_TOKEN_DELAY_MS: String(CRASH_TOKEN_DELAY_MS),
    JOB_LOCK_MS: String(JOB_LOCK_MS),
    JOB_STALLED_INTERVAL_MS: String(STALLED_INTERVAL_MS),
  };
  const web = await spawnProcess('../src/server.js', env, /web listening/);
  started.push(web);
  const { key } = await bench.user('evals-crash@example.test');
  const client = { url: `http://127.0.0.1:${CRASH_PORT}`, key };
  const agent = await expectOk<{ id: string }>(client, 'POST', '/api/agents', { name: 'crash agent' });
  const datasetId = await dataset(client, 'crash arithmetic', CRASH_ITEMS, 300);

  const a = await startWorker(env, 'A');
  const workers: Worker[] = [a];
  try {
    const evalStarted = performance.now();
    const created = await expectOk<EvalRecord>(client, 'POST', '/api/evals', { dataset_id: datasetId, agent_id: agent.id, scorers: SCORERS, concurrency: CONCURRENCY });
    // Its driver is taken by A, the only worker: then B starts, and runs the eval's runs beside A.
    let record = created;
    while (record.status === 'queued') {
      await sleep(POLL_MS);
      record = await expectOk<EvalRecord>(client, 'GET', `/api/evals/${created.id}`);
    }
    workers.push(await startWorker(env, 'B'));
    let killedAt = 0;
    let killedAtClock = 0;
    let doneAtKill = 0;
    let replacement: Promise<Worker> | undefined;
    let gaveUp = false;
    const ended = await untilEvalEnds(client, created.id, (r) => {
      // An eval that has not ended CRASH_DEADLINE_S after the kill is given up on: what is still open is counted as lost.
      if (killedAt && performance.now() - killedAt > CRASH_DEADLINE_S * 1000 && !gaveUp) {
        gaveUp = true;
        throw new GaveUp();
      }
      if (!killedAt && r.status === 'running' && r.progress.done >= CRASH_ITEMS * 0.3) {
        a.child.kill('SIGKILL');
        killedAt = performance.now();
        killedAtClock = Date.now();
        doneAtKill = r.progress.done;
        replacement = startWorker(env, 'C');
      }
    });
    const recoverySeconds = (performance.now() - killedAt) / 1000;
    if (replacement) workers.push(await replacement);
    if (!killedAt) throw new Error('the eval ended before the kill');

    const [counts] = (await bench.knex.raw(
      `select e.status, e.done, e.failed_items, e.total,
         (select count(*) from eval_items i where i.eval_id = e.id)::int as items,
         (select count(*) from eval_items i where i.eval_id = e.id and i.status in ('scored', 'failed'))::int as finished,
         (select count(*) from eval_items i where i.eval_id = e.id and (i.status not in ('scored', 'failed') or i.scores is null))::int as lost,
         (select count(*) from eval_items i where i.eval_id = e.id and i.status = 'failed')::int as failed,
         (select count(*) from runs r where r.eval_id = e.id)::int as runs,
         (select count(*) from runs r where r.eval_id = e.id and (select count(*) from eval_items i where i.run_id = r.id) <> 1)::int as runs_not_one_item,
         (select count(*) from eval_items i where i.eval_id = e.id and not exists (select 1 from runs r where r.id = i.run_id))::int as items_without_run,
         (select count(*) from runs r where r.eval_id = e.id and r.crashes > 0)::int as runs_resumed,
         (select count(*) from runs r where r.eval_id = e.id and r.status <> 'succeeded')::int as runs_not_succeeded
       from evals e where e.id = ?`,
      [created.id],
    )).rows as Record<string, number | string>[];
    const c = counts!;
    const open = (await bench.knex.raw(
      `select i.position, i.status as item_status, r.status as run_status, r.attempt, i.started_at, r.created_at as run_created_at
       from eval_items i left join runs r on r.id = i.run_id where i.eval_id = ? and i.status not in ('scored', 'failed') order by i.position`,
      [created.id],
    )).rows as Record<string, unknown>[];
    if (open.length > 0) {
      console.log(`\n!! ${open.length} item(s) still open once the eval ended or was given up on (eval ${ended.status}): ${JSON.stringify(open)}`);
      await call(client, 'POST', `/api/evals/${created.id}/cancel`);
    }
    // Every resumption of the driver, by whom and when against the kill (one before it: the driver's job stalled on a busy A and was taken again).
    const resumptions = workers.flatMap((w) => w.output.split('\n').filter((line) => line.includes('"msg":"eval resumed')).map((line) => ({ worker: w.name, at: round(((JSON.parse(line) as { time: number }).time - killedAtClock) / 1000, 2) })));
    const resumedBy = resumptions.map((r) => `${r.worker}@${r.at}s`);
    const resumedAfter = Math.min(...resumptions.filter((r) => r.at >= 0).map((r) => r.at));
    // What the rest would have taken at the pace before the kill (the eval's own baseline).
    const paceBefore = doneAtKill / ((killedAt - evalStarted) / 1000);
    const expectedRest = (CRASH_ITEMS - doneAtKill) / paceBefore;
    console.log(`\nevals, part 3: kill -9 of worker A (driving the eval; B runs beside it) at ${doneAtKill}/${CRASH_ITEMS} done, replacement C started; JOB_LOCK_MS=${JOB_LOCK_MS}, JOB_STALLED_INTERVAL_MS=${STALLED_INTERVAL_MS}, concurrency ${CONCURRENCY}\n`);
    console.table({
      eval: {
        status: gaveUp ? `${ended.status} (stuck)` : ended.status,
        'kill → driver resumed s': round(resumedAfter, 2),
        'kill → ended s': gaveUp ? `> ${CRASH_DEADLINE_S}` : round(recoverySeconds, 2),
        'rest at the pace before s': round(expectedRest, 2),
        'driver resumed (worker@s from kill)': resumedBy.join(' ') || 'none logged',
        'items lost': Number(c.lost),
        'scored twice (done − finished items)': Number(c.done) - Number(c.finished),
        'runs not of exactly one item': Number(c.runs_not_one_item),
        'items without a run': Number(c.items_without_run),
      },
    });
    console.log(`items ${c.items}, finished ${c.finished} (failed ${c.failed}); evals.done ${c.done}, failed_items ${c.failed_items}; runs of the eval ${c.runs} (${c.runs_not_succeeded} not succeeded, ${c.runs_resumed} resumed after a crash). Target: items lost 0, scored twice 0.`);
  } finally {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) started.push(w.child);
  }
}

/** `npm run bench -- evals [part]`: every part in order, or those named (`throughput`, `statements`, `scoring`, `crash`). BENCH_QUICK=1: 200 items (crash: 100). */
export async function run(args: string[] = []): Promise<void> {
  const runs = (part: string) => args.length === 0 || args.includes(part);
  const bench = await benchEnvironment('evals');
  const started: ChildProcess[] = [];
  let part1: Throughput | undefined;
  try {
    if (runs('throughput')) {
      part1 = await throughput(bench, started);
      for (const child of started.splice(0).reverse()) await stop(child);
    }
    if (runs('statements')) await statements(bench, started);
    if (runs('scoring')) await scoringCost(part1);
    if (runs('crash')) await crash(bench, started);
    console.log(`\nevals that ended failed during this bench (each run again, its time not counted): ${failedEvals.length}`);
    for (const message of failedEvals) console.log(`  ${message}`);
  } finally {
    for (const child of started.reverse()) await stop(child);
    await bench.drop();
  }
}
