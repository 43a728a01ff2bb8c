import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import type { Knex } from 'knex';
import { benchEnvironment, completedPerSecond, percentile, postRun, round, spawnProcess, stop, timedRun } from './support.js';
import { RETENTION_QUEUE } from '../workers/retention.js';
import { MESSAGE_OVERHEAD, tokenizer, withSummary, type TokenCounter } from '../src/shared/context-window.js';
import { cpuSeconds } from './cpu.js';

/**
 * Conversations (DESIGN §20).
 *
 * Part 1, `paging`: `GET /api/conversations/{id}` (its last 100 messages) and message pages
 * (`/messages?limit=50`, and one from the middle with `before`) of a conversation of 100,000
 * messages against one of 10, sequential requests interleaved on one web process; p50 of each and
 * the ratio big / small (target ≤ 1.2: keyset paging on (conversation_id, seq) costs the same at
 * any length). Seeded with one multi-row insert per 10,000 messages, then VACUUM ANALYZE.
 *
 * Part 2, `retention`: the retention job (on a worker, CONVERSATION_RETENTION_DAYS=1) deleting idle
 * conversations of 10 messages and a run each (500 per statement, resting as long as each batch
 * took): conversations/s alone, and completed runs/s at 20 clients with and without the job
 * deleting meanwhile (alternating rounds; a round with the job waits for its last job to end).
 */
const PORT = 3961;
const BIG = 100_000;
const SMALL = 10;
const SEED_CHUNK = 10_000;
const WARM_UP = 100;
const SAMPLES = 500;

const RUN_CLIENTS = 20;
const RUN_ROUND_S = 6;
const RUN_ROUNDS = 3;
const IDLE_CONVERSATIONS = 40_000;
const IDLE_MESSAGES = 10;

type Bench = Awaited<ReturnType<typeof benchEnvironment>>;

/** A conversation of `messages` messages, one multi-row insert per SEED_CHUNK. */
async function seedConversation(knex: Knex, userId: string, messages: number): Promise<{ id: string; middle: string }> {
  const id = randomUUID();
  await knex('conversations').insert({ id, user_id: userId, title: `${messages} messages` });
  for (let from = 1; from <= messages; from += SEED_CHUNK) {
    const to = Math.min(messages, from + SEED_CHUNK - 1);
    await knex.raw(
      `insert into messages (id, conversation_id, role, content)
       select gen_random_uuid(), ?, case when g % 2 = 1 then 'user' else 'assistant' end, 'message ' || g || ': ' || repeat('lorem ipsum ', 8)
       from generate_series(?::int, ?::int) g order by g`,
      [id, from, to],
    );
  }
  const middle = await knex('messages').where({ conversation_id: id }).orderBy('seq').offset(Math.floor(messages / 2)).first('id');
  return { id, middle: middle.id };
}

async function timeGet(url: string, key: string, path: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${path} → ${res.status}`);
  return performance.now() - started;
}

export async function paging(bench: Bench, started: ChildProcess[]): Promise<void> {
  const { user, key } = await bench.user('paging@example.test');
  const big = await seedConversation(bench.knex, user.id, BIG);
  const small = await seedConversation(bench.knex, user.id, SMALL);
  await bench.knex.raw('vacuum analyze');
  const url = `http://127.0.0.1:${PORT}`;
  started.push(await spawnProcess('../src/server.js', { ...bench.env, PORT: String(PORT), LOG_LEVEL: 'info', METRICS_ENABLED: 'false' }, /web listening/));
  await sleep(500);
  const smallMiddle = (await bench.knex('messages').where({ conversation_id: small.id }).orderBy('seq').offset(SMALL / 2).first('id')).id as string;
  const reads = {
    'GET conversation (last 100)': (c: { id: string }) => `/api/conversations/${c.id}`,
    'messages?limit=50': (c: { id: string }) => `/api/conversations/${c.id}/messages?limit=50`,
    // The same 10 messages from both: only the conversation's length differs.
    'messages?limit=10': (c: { id: string }) => `/api/conversations/${c.id}/messages?limit=10`,
    'messages?before=<middle>&limit=50': (c: { id: string; middle: string }) => `/api/conversations/${c.id}/messages?limit=50&before=${c.middle}`,
  };
  const rows: Record<string, Record<string, number>> = {};
  for (const [name, path] of Object.entries(reads)) {
    const conversations = { [`${BIG.toLocaleString('en')} messages`]: big, [`${SMALL} messages`]: { id: small.id, middle: smallMiddle } };
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(conversations).map((label) => [label, []]));
    for (let i = 0; i < WARM_UP + SAMPLES; i++) {
      const order = i % 2 === 0 ? Object.entries(conversations) : Object.entries(conversations).reverse();
      for (const [label, conversation] of order) {
        const ms = await timeGet(url, key, path(conversation));
        if (i >= WARM_UP) samples[label]!.push(ms);
      }
    }
    const [bigLabel, smallLabel] = Object.keys(conversations) as [string, string];
    const p50Big = percentile(samples[bigLabel]!, 50);
    const p50Small = percentile(samples[smallLabel]!, 50);
    rows[name] = {
      [`p50 ms, ${bigLabel}`]: round(p50Big, 3),
      [`p50 ms, ${smallLabel}`]: round(p50Small, 3),
      [`p99 ms, ${bigLabel}`]: round(percentile(samples[bigLabel]!, 99), 3),
      [`p99 ms, ${smallLabel}`]: round(percentile(samples[smallLabel]!, 99), 3),
      'ratio p50 big / small (target ≤ 1.2)': round(p50Big / p50Small, 3),
    };
  }
  console.log(`\nconversation reads: ${BIG.toLocaleString('en')} messages against ${SMALL}, ${SAMPLES} sequential requests each (interleaved, after ${WARM_UP} warm-up), one web process\n`);
  console.table(rows);
}

/** `count` idle conversations (updated 3 days ago) of `userId`, each with IDLE_MESSAGES messages and a finished run with a stream. */
async function seedIdle(bench: Bench, userId: string, count: number): Promise<void> {
  const { knex, redis, identity } = bench;
  for (let done = 0; done < count; done += SEED_CHUNK / IDLE_MESSAGES) {
    const n = Math.min(count - done, SEED_CHUNK / IDLE_MESSAGES);
    const { rows } = await knex.raw(
      `with c as (
         insert into conversations (id, user_id, title, updated_at) select gen_random_uuid(), ?, 'idle', now() - interval '3 days' from generate_series(1, ?) returning id
       ), r as (
         insert into runs (id, user_id, conversation_id, mode, status, query, answer, usage)
         select gen_random_uuid(), ?, id, 'react', 'succeeded', 'an old question', 'an old answer', '{"total_tokens": 20}' from c returning id, conversation_id
       ), m as (
         insert into messages (id, conversation_id, run_id, role, content)
         select gen_random_uuid(), r.conversation_id, r.id, case when g % 2 = 1 then 'user' else 'assistant' end, 'old message ' || g from r cross join generate_series(1, ?) g
       )
       select id from r`,
      [userId, n, userId, IDLE_MESSAGES],
    );
    const pipeline = redis.pipeline();
    for (const { id } of rows as { id: string }[]) pipeline.xadd(identity.keys.runEvents({ id, userId }), '*', 'type', 'done', 'data', '{}');
    await pipeline.exec();
  }
}

/** Adds retention jobs one after the other until `stopAt()` (or nothing is left); conversations deleted and the jobs' own time. */
async function retentionJobs(queue: Queue, stopAt: () => boolean): Promise<{ deleted: number; ms: number }> {
  let deleted = 0;
  let ms = 0;
  while (!stopAt()) {
    const job = await queue.add('expire', {}, { removeOnComplete: false });
    for (;;) {
      const state = await queue.getJobState(job.id!);
      if (state === 'completed' || state === 'failed') break;
      await sleep(20);
    }
    const finished = await queue.getJob(job.id!);
    if (!finished || finished.failedReason) throw new Error(`retention job failed: ${finished?.failedReason}`);
    const outcome = finished.returnvalue as { deleted: number };
    deleted += outcome.deleted;
    ms += (finished.finishedOn ?? 0) - (finished.processedOn ?? 0);
    if (outcome.deleted === 0) break;
  }
  return { deleted, ms };
}

export async function retention(bench: Bench, started: ChildProcess[]): Promise<void> {
  const env = { ...bench.env, PORT: String(PORT + 1), LOG_LEVEL: 'info', METRICS_ENABLED: 'false', RUNS_PER_USER_LIMIT: '100000', LOCAL_MODEL_TOKEN_DELAY_MS: '0', CONVERSATION_RETENTION_DAYS: '1' };
  started.push(await spawnProcess('../src/server.js', env, /web listening/));
  started.push(await spawnProcess('../workers/main.js', env, /worker ready/));
  const url = `http://127.0.0.1:${PORT + 1}`;
  const { user, key } = await bench.user('retention@example.test');
  const idleOwner = (await bench.user('idle@example.test')).user;
  const queue = new Queue(RETENTION_QUEUE, { connection: bench.redis, prefix: bench.identity.keys.bullPrefix(RETENTION_QUEUE) });
  try {
    // Alone: how fast the job deletes.
    await seedIdle(bench, idleOwner.id, IDLE_CONVERSATIONS);
    const alone = await retentionJobs(queue, () => false);
    console.log(`\nretention job alone: ${alone.deleted.toLocaleString('en')} conversations (${IDLE_MESSAGES} messages, a run and its stream each) in ${round(alone.ms / 1000, 2)} s = ${Math.round(alone.deleted / (alone.ms / 1000))} conversations/s`);

    const run = () => timedRun(url, key, 'hello');
    // Unmeasured: the first seconds under load are the JIT's and the pools' (two rounds' worth).
    await completedPerSecond(run, RUN_CLIENTS, RUN_ROUND_S * 2);
    const rates: Record<string, number[]> = { 'without retention': [], 'with retention deleting': [] };
    const during: { deleted: number; ms: number }[] = [];
    // Enough idle conversations for every round with the job, seeded (and analysed) before any round.
    await seedIdle(bench, idleOwner.id, IDLE_CONVERSATIONS * 1.5);
    await bench.knex.raw('vacuum analyze');
    for (let i = 0; i < RUN_ROUNDS * 2; i++) {
      const withJob = i % 2 === 1;
      await sleep(1000);
      let over = false;
      const jobs = withJob ? retentionJobs(queue, () => over) : undefined;
      const measured = await completedPerSecond(run, RUN_CLIENTS, RUN_ROUND_S);
      over = true;
      if (jobs) during.push(await jobs);
      if (measured.errors > 0) throw new Error(`${measured.errors} runs failed`);
      rates[withJob ? 'with retention deleting' : 'without retention']!.push(measured.perSecond);
    }
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    console.log(`\nruns/s at ${RUN_CLIENTS} clients (local model, no token delay), ${RUN_ROUNDS} rounds of ${RUN_ROUND_S} s each, alternating; one web, one worker\n`);
    console.table(Object.fromEntries(Object.entries(rates).map(([name, values]) => [name, { 'runs/s': round(mean(values), 1), rounds: values.map((v) => round(v, 1)).join(', ') }])));
    const deletedDuring = during.reduce((a, b) => a + b.deleted, 0);
    const msDuring = during.reduce((a, b) => a + b.ms, 0);
    console.log(`with / without = ${round(mean(rates['with retention deleting']!) / mean(rates['without retention']!), 3)}; the job deleted ${deletedDuring.toLocaleString('en')} conversations meanwhile at ${Math.round(deletedDuring / (msDuring / 1000))} conversations/s`);
  } finally {
    await queue.close();
  }
}

// part: context-window figures

/**
 * Part 3, `context-window` (DESIGN §20): prompt tokens sent per run in a conversation of 1,000
 * turns against one of 10 (local model, an agent of context_window 8,192; the conversations seeded
 * with ~35-token messages, no summary yet), WINDOW_RUNS runs on each: the transcript the run's
 * answer call read (summary + messages after summary_through + question, counted here with the same
 * o200k_base tokenizer), the run's usage prompt_tokens (the local model counts words; summarising
 * calls included) and the compaction each run made. The worker's CPU per run (tokenizing, compaction
 * and the rest of the run), first run (catching up a whole history) and steady state; the
 * tokenizer's load time and memory, and its rate on one message.
 */
const WINDOW_TURNS = { '1,000 turns': 1000, '10 turns': 10 };
const WINDOW_RUNS = 6;
const BENCH_CONTEXT_WINDOW = 8192;
const COUNT_SAMPLES = 20_000;

async function seedTurns(knex: Knex, userId: string, agentId: string, turns: number): Promise<string> {
  const id = randomUUID();
  await knex('conversations').insert({ id, user_id: userId, agent_id: agentId, title: `${turns} turns` });
  await knex.raw(
    `insert into messages (id, conversation_id, role, content)
     select gen_random_uuid(), ?, case when g % 2 = 1 then 'user' else 'assistant' end,
       case when g % 2 = 1 then 'Question ' || g || ': what do you think of the plan for week ' || g || ': I would like a short answer with the main risks.'
            else 'Answer ' || g || ': the plan for week ' || g || ' looks sound. The main risks are the schedule, the budget and the people; keep an eye on all three.' end
     from generate_series(1, ?::int) g order by g`,
    [id, turns * 2],
  );
  return id;
}

/** What the run's answer call read, in tokens: the system message with the summary, the turns after summary_through, the question. */
async function transcriptTokens(knex: Knex, counter: TokenCounter, conversationId: string, runId: string): Promise<number> {
  const conversation = await knex('conversations').where({ id: conversationId }).first('summary', 'summary_through');
  const { rows } = await knex.raw(
    `select content from messages
     where conversation_id = ? and seq > coalesce((select seq from messages where id = ?), 0)
       and seq < (select seq from messages where run_id = ? and role = 'user' and not injected)`,
    [conversationId, conversation.summary_through, runId],
  );
  const question = await knex('runs').where({ id: runId }).first('query');
  const system = withSummary('', conversation.summary);
  const parts = [...(system ? [system] : []), ...(rows as { content: string }[]).map((r) => r.content), question.query as string];
  return parts.reduce((sum, text) => sum + counter.count(text) + MESSAGE_OVERHEAD, 0);
}

export async function contextWindow(bench: Bench, started: ChildProcess[]): Promise<void> {
  const rssBefore = process.memoryUsage().rss;
  const loadStarted = performance.now();
  const counter = await tokenizer();
  const loadMs = performance.now() - loadStarted;
  const rssMb = (process.memoryUsage().rss - rssBefore) / 1e6;
  const message = 'Answer 7: the plan for week 7 looks sound. The main risks are the schedule, the budget and the people; keep an eye on all three.';
  const cpuStarted = process.cpuUsage();
  for (let i = 0; i < COUNT_SAMPLES; i++) counter.count(message);
  const spent = process.cpuUsage(cpuStarted);
  const countUs = (spent.user + spent.system) / COUNT_SAMPLES;
  const perMessage = counter.count(message);
  console.log(`\ntokenizer (js-tiktoken o200k_base): loaded in ${Math.round(loadMs)} ms, +${Math.round(rssMb)} MB RSS; a ${perMessage}-token message counts in ${round(countUs, 1)} µs CPU (${Math.round((perMessage / countUs) * 1e6).toLocaleString('en')} tokens/s)`);

  const env = { ...bench.env, PORT: String(PORT + 2), LOG_LEVEL: 'info', METRICS_ENABLED: 'false', LOCAL_MODEL_TOKEN_DELAY_MS: '0' };
  started.push(await spawnProcess('../src/server.js', env, /web listening/));
  const worker = await spawnProcess('../workers/main.js', env, /worker ready/);
  started.push(worker);
  const url = `http://127.0.0.1:${PORT + 2}`;
  const { user, key } = await bench.user('context-window@example.test');
  const created = await fetch(`${url}/api/agents`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'windowed', context_window: BENCH_CONTEXT_WINDOW }) });
  const agentId = ((await created.json()) as { id: string }).id;
  const rows: Record<string, Record<string, string | number>> = {};
  const steady: Record<string, { transcript: number[]; cpu: number[] }> = {};
  for (const [label, turns] of Object.entries(WINDOW_TURNS)) {
    const conversationId = await seedTurns(bench.knex, user.id, agentId, turns);
    await bench.knex.raw('analyze messages');
    steady[label] = { transcript: [], cpu: [] };
    for (let i = 0; i < WINDOW_RUNS; i++) {
      const cpuBefore = cpuSeconds(worker.pid!);
      const runStarted = performance.now();
      let usage = { prompt_tokens: 0 };
      let compaction: { summarized_messages: number; tokens_before: number; tokens_after: number } | undefined;
      const res = await postRun(url, key, { q: `Question ${i}: and what about next week? Please list the risks again.`, conversation_id: conversationId }, (e) => {
        if (e.event === 'done') usage = JSON.parse(e.data).usage;
        if (e.event === 'compaction') compaction = JSON.parse(e.data);
      });
      const wallMs = performance.now() - runStarted;
      const cpuMs = (cpuSeconds(worker.pid!) - cpuBefore) * 1000;
      const transcript = await transcriptTokens(bench.knex, counter, conversationId, res.headers.get('x-run-id')!);
      if (i > 0) {
        steady[label]!.transcript.push(transcript);
        steady[label]!.cpu.push(cpuMs);
      }
      rows[`${label} #${i + 1}`] = {
        'transcript tokens': transcript,
        'usage prompt_tokens': usage.prompt_tokens,
        compaction: compaction ? `${compaction.summarized_messages} msgs, ${compaction.tokens_before.toLocaleString('en')} → ${compaction.tokens_after.toLocaleString('en')}` : '—',
        'worker CPU ms': round(cpuMs, 1),
        'wall ms': round(wallMs, 1),
      };
    }
  }
  console.log(`\nprompt tokens per run, agent context_window ${BENCH_CONTEXT_WINDOW.toLocaleString('en')} (compaction past 80%, to 50%), ${WINDOW_RUNS} runs per conversation; one web, one worker\n`);
  console.table(rows);
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const [long, short] = Object.keys(WINDOW_TURNS).map((label) => steady[label]!);
  console.log(
    `runs 2–${WINDOW_RUNS}: transcript ${Math.round(mean(long!.transcript)).toLocaleString('en')} tokens at 1,000 turns against ${Math.round(mean(short!.transcript)).toLocaleString('en')} at 10 (ratio ${round(mean(long!.transcript) / mean(short!.transcript), 2)}, bound ${Math.floor(BENCH_CONTEXT_WINDOW * 0.8).toLocaleString('en')}); ` +
      `worker CPU ${round(mean(long!.cpu), 1)} ms against ${round(mean(short!.cpu), 1)} ms per run`,
  );
}

/** `npm run bench -- conversations [part]`: every part in order, or those named (`paging`, `retention`, `context-window`). */
export async function run(args: string[] = []) {
  const runs = (part: string) => args.length === 0 || args.includes(part);
  const bench = await benchEnvironment('conversations');
  const started: ChildProcess[] = [];
  try {
    if (runs('paging')) await paging(bench, started);
    for (const child of started.splice(0).reverse()) await stop(child);
    if (runs('retention')) await retention(bench, started);
    for (const child of started.splice(0).reverse()) await stop(child);
    if (runs('context-window')) await contextWindow(bench, started);
  } finally {
    for (const child of started.reverse()) await stop(child);
    await bench.drop();
  }
}
