import type { ChildProcess } from 'node:child_process';
import { benchEnvironment, completedPerSecond, firstEventMs, interleaved, isChatContent, isChatDone, percentile, round, spawnProcess, stop } from './support.js';

/**
 * Structured outputs (DESIGN §23): the same run with an output schema and without, paired, through
 * a local streaming gateway (bench/structured-gateway.ts: 20 tokens at once, JSON when asked for
 * it). (1) first-token p50/p99 on /api/react (tokens stream live either way) and on
 * /v1/chat/completions streaming (a structured answer is sent once validated, so its first content
 * is the whole answer), sequential and interleaved; (2) completed runs/s at 20 clients on /api/react,
 * alternating rounds. `BENCH_QUICK=1` for a short run. The lead wires it into `compat`; standalone:
 * `npm run bench -- compat-structured`.
 */
const WEB_PORT = 3975;
const GATEWAY_PORT = 3976;
const quick = process.env.BENCH_QUICK === '1';
const SEQUENTIAL = quick ? 30 : 200;
const WARM_UP = quick ? 5 : 30;
const CLIENTS = 20;
const ROUND_SECONDS = quick ? 3 : 8;
const ROUNDS = 2;

const SCHEMA = { type: 'object', properties: { words: { type: 'string' } }, required: ['words'], additionalProperties: false };

type Run = () => Promise<number>;

const post = (url: string, key: string, path: string, body: unknown) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });

const react = (url: string, key: string, agentId: string, schema: object | undefined): Run => () =>
  firstEventMs(performance.now(), post(url, key, '/api/react', { q: 'hello', agent_id: agentId, ...(schema ? { output_schema: schema } : {}) }), (event) => event === 'token', (event, data) => event === 'done' && JSON.parse(data).status === 'succeeded', '/api/react');

const chat = (url: string, key: string, agentId: string, schema: object | undefined): Run => () =>
  firstEventMs(
    performance.now(),
    post(url, key, '/v1/chat/completions', {
      model: `agent:${agentId}`,
      stream: true,
      messages: [{ role: 'user', content: 'hello' }],
      ...(schema ? { response_format: { type: 'json_schema', json_schema: { name: 'words', schema, strict: true } } } : {}),
    }),
    isChatContent,
    isChatDone,
    '/v1/chat/completions',
  );

const p50 = (values: number[]) => round(percentile(values, 50));
const p99 = (values: number[]) => round(percentile(values, 99));
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

async function firstTokens(url: string, key: string, agentId: string): Promise<void> {
  for (const [path, make] of [['/api/react', react], ['/v1/chat/completions', chat]] as const) {
    const samples = await interleaved({ 'without schema': make(url, key, agentId, undefined), 'with schema': make(url, key, agentId, SCHEMA) }, SEQUENTIAL, WARM_UP);
    const without = samples['without schema']!;
    const withSchema = samples['with schema']!;
    console.log(`\n${path}: first token, ${SEQUENTIAL} sequential pairs (interleaved), ms:`);
    console.table({ 'without schema': { p50: p50(without), p99: p99(without) }, 'with schema': { p50: p50(withSchema), p99: p99(withSchema) } });
    console.log(`${path}: a schema adds ${round(p50(withSchema) - p50(without))} ms p50 (ratio ${round(p50(withSchema) / p50(without), 3)})`);
  }
}

async function throughput(url: string, key: string, agentId: string): Promise<void> {
  const runs = { 'without schema': react(url, key, agentId, undefined), 'with schema': react(url, key, agentId, SCHEMA) };
  const rates: Record<string, number[]> = { 'without schema': [], 'with schema': [] };
  let errors = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? Object.keys(runs) : Object.keys(runs).reverse();
    for (const name of order) {
      const measured = await completedPerSecond(runs[name as keyof typeof runs], CLIENTS, ROUND_SECONDS);
      rates[name]!.push(measured.perSecond);
      errors += measured.errors;
    }
  }
  console.log(`\n/api/react: completed runs/s at ${CLIENTS} clients, ${ROUNDS} alternating rounds of ${ROUND_SECONDS} s each (errors: ${errors}):`);
  console.table(Object.fromEntries(Object.entries(rates).map(([name, values]) => [name, { 'runs/s': round(mean(values)), rounds: values.map((v) => round(v, 1)).join(' / ') }])));
  console.log(`with schema / without: ${round(mean(rates['with schema']!) / mean(rates['without schema']!), 3)}`);
}

export async function structuredOutputBench(): Promise<void> {
  const started: ChildProcess[] = [];
  const bench = await benchEnvironment('compat_structured');
  try {
    started.push(await spawnProcess('./structured-gateway.js', {}, /gateway listening/, [String(GATEWAY_PORT)]));
    const env = { ...bench.env, PORT: String(WEB_PORT), LOG_LEVEL: 'info', RUNS_PER_USER_LIMIT: '100000', GATEWAY_URL: `http://127.0.0.1:${GATEWAY_PORT}`, GATEWAY_API_KEY: 'bench' };
    started.push(await spawnProcess('../src/server.js', env, /web listening/));
    started.push(await spawnProcess('../workers/main.js', env, /worker ready/));
    const url = `http://127.0.0.1:${WEB_PORT}`;
    const { key } = await bench.user('bench@example.test');
    const created = await post(url, key, '/api/agents', { name: 'structured_bench', model: 'bench-model', tools: [] });
    if (created.status !== 201) throw new Error(`agent: ${created.status} ${await created.text()}`);
    const agentId = ((await created.json()) as { id: string }).id;
    await firstTokens(url, key, agentId);
    await throughput(url, key, agentId);
  } finally {
    for (const child of started.reverse()) await stop(child);
    await bench.drop();
  }
}

/** The bench registry's entry point (`npm run bench -- compat-structured`). */
export const run = structuredOutputBench;
