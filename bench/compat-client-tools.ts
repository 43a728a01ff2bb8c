import type { ChildProcess } from 'node:child_process';
import { benchEnvironment, firstEventMs, isChatContent, isChatDone, percentile, round, spawnProcess, stop } from './support.js';

/**
 * A client-tool round trip (DESIGN §23) on /v1/chat/completions with the local model: the time
 * from sending the tool results of a parked run to the resumed run's first token (park → tool
 * output → first token), against a fresh run's first token, p50 of interleaved samples. Target:
 * the resume costs ≤ 1.5× a fresh start.
 */
const WEB_PORT = 3974;
const SAMPLES = 100;
const WARM_UP = 10;
const QUESTION = 'Use get_weather for Paris';
const TOOLS = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

type Message = Record<string, unknown>;

const post = (url: string, key: string, body: unknown) =>
  fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });

/** Ms from `started` to the first content delta of a streamed chat completion; fails if it does not end with [DONE]. */
const firstContent = (started: number, response: Promise<Response>) => firstEventMs(started, response, isChatContent, isChatDone);

const fresh = (url: string, key: string, model: string) => () => firstContent(performance.now(), post(url, key, { model, stream: true, messages: [{ role: 'user', content: 'hello' }] }));

/** Parks a run on a client call (not timed), then times its resumption by the tool result. */
async function roundTrip(url: string, key: string, model: string): Promise<number> {
  const messages: Message[] = [{ role: 'user', content: QUESTION }];
  const parked = await post(url, key, { model, messages, tools: TOOLS });
  const body = (await parked.json()) as { choices: { finish_reason: string; message: Message & { tool_calls: { id: string }[] } }[] };
  const choice = body.choices?.[0];
  if (choice?.finish_reason !== 'tool_calls') throw new Error(`the run did not park: ${JSON.stringify(body)}`);
  const results = choice.message.tool_calls.map((call) => ({ role: 'tool', tool_call_id: call.id, content: 'sunny' }));
  const started = performance.now();
  return firstContent(started, post(url, key, { model, stream: true, tools: TOOLS, messages: [...messages, choice.message, ...results] }));
}

export async function clientToolBench(): Promise<void> {
  const started: ChildProcess[] = [];
  const bench = await benchEnvironment('compat_client_tools');
  try {
    const env = { ...bench.env, PORT: String(WEB_PORT), LOG_LEVEL: 'info', RUNS_PER_USER_LIMIT: '100000' };
    started.push(await spawnProcess('../src/server.js', env, /web listening/));
    started.push(await spawnProcess('../workers/main.js', env, /worker ready/));
    const url = `http://127.0.0.1:${WEB_PORT}`;
    const { key } = await bench.user('bench-client-tools@example.test');
    const model = 'agent:default';
    const samples: Record<'fresh' | 'resume', number[]> = { fresh: [], resume: [] };
    for (let i = 0; i < WARM_UP + SAMPLES; i++) {
      const pair = [['fresh', fresh(url, key, model)], ['resume', () => roundTrip(url, key, model)]] as const;
      for (const [name, run] of i % 2 === 0 ? pair : [...pair].reverse()) {
        const ms = await run();
        if (i >= WARM_UP) samples[name].push(ms);
      }
    }
    const p50 = (values: number[]) => round(percentile(values, 50));
    const p99 = (values: number[]) => round(percentile(values, 99));
    console.log(`\nclient tools: first token, ${SAMPLES} interleaved samples each, ms:`);
    console.table({ 'fresh run': { p50: p50(samples.fresh), p99: p99(samples.fresh) }, 'tool output → resumed first token': { p50: p50(samples.resume), p99: p99(samples.resume) } });
    console.log(`resume / fresh first-token p50: ${round(p50(samples.resume) / p50(samples.fresh), 3)} (target ≤ 1.5)`);
  } finally {
    for (const child of started.reverse()) await stop(child);
    await bench.drop();
  }
}

/** `npm run bench -- compat-client-tools` runs it alone. */
export const run = clientToolBench;
