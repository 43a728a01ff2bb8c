import type { ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { benchEnvironment, completedPerSecond, firstEventMs, interleaved, isChatContent, isChatDone, percentile, round, spawnProcess, stop } from './support.js';
import { structuredOutputBench } from './compat-structured.js';
import { clientToolBench } from './compat-client-tools.js';
import { keywordRetrievalBench } from './compat-retrieval.js';

/**
 * The ecosystem's clients (DESIGN §16), each against the platform's own interface on the same agent
 * in the same run, through a local streaming gateway (20 tokens at once, its own process):
 * (1) first-token p50 of /v1/chat/completions (streaming) against /api/react, sequential and
 *     interleaved (target: ≤ 1 ms more); (2) completed runs/s at 20 clients, alternating rounds
 *     (target: ≥ 0.95 of /api/react); (3) an MCP tools/call (the official client, one session)
 *     against the same run through POST /api/runs + GET ?wait, time to the answer.
 * Then DESIGN §23's answers clients rely on, each on a stack of its own: (4) a structured run against
 * the same run without a schema; (5) a client-tool round trip's resumed first token against a fresh
 * run's; (6) keyword retrieval's recall@5 (any-term BM25 against the old all-terms search) and p50 at
 * 100,000 chunks. `npm run bench -- compat-structured` (or -client-tools, -retrieval) runs one alone.
 */
const WEB_PORT = 3970;
const GATEWAY_PORT = 3971;
const SEQUENTIAL = 200;
const WARM_UP = 30;
const CLIENTS = 20;
const ROUND_SECONDS = 8;
const ROUNDS = 2;
const ANSWERS = 100;

type Run = () => Promise<number>;

const post = (url: string, key: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });

const react = (url: string, key: string, agentId: string): Run => () => {
  const started = performance.now();
  return firstEventMs(started, post(`${url}/api/react`, key, { q: 'hello', agent_id: agentId }), (event) => event === 'token', (event, data) => event === 'done' && JSON.parse(data).status === 'succeeded');
};

const chatCompletions = (url: string, key: string, agentId: string): Run => () => {
  const started = performance.now();
  return firstEventMs(started, post(`${url}/v1/chat/completions`, key, { model: `agent:${agentId}`, stream: true, messages: [{ role: 'user', content: 'hello' }] }), isChatContent, isChatDone);
};

async function mcpCaller(url: string, key: string, agentName: string) {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name.startsWith(agentName.replace(/\W/g, '_')));
  if (!tool) throw new Error(`no MCP tool for agent ${agentName}: ${tools.map((t) => t.name).join(', ')}`);
  return {
    client,
    call: async () => {
      const started = performance.now();
      const result = await client.callTool({ name: tool.name, arguments: { q: 'hello' } });
      if (result.isError) throw new Error(JSON.stringify(result.content));
      return performance.now() - started;
    },
  };
}

const backgroundRun = (url: string, key: string, agentId: string): Run => async () => {
  const started = performance.now();
  const accepted = (await (await post(`${url}/api/runs`, key, { mode: 'react', q: 'hello', agent_id: agentId })).json()) as { run_id: string };
  const res = await fetch(`${url}/api/runs/${accepted.run_id}?wait=30`, { headers: { authorization: `Bearer ${key}` } });
  const run = (await res.json()) as { status: string };
  if (run.status !== 'succeeded') throw new Error(`run ${accepted.run_id} ended ${run.status}`);
  return performance.now() - started;
};

const p50 = (values: number[]) => round(percentile(values, 50));
const p99 = (values: number[]) => round(percentile(values, 99));

export async function run() {
  await ecosystemClients();
  for (const [title, part] of [['structured outputs', structuredOutputBench], ['client tools', clientToolBench], ['keyword retrieval', keywordRetrievalBench]] as const) {
    console.log(`\n=== ${title} (DESIGN §23) ===`);
    await part();
  }
}

async function ecosystemClients() {
  const started: ChildProcess[] = [];
  const bench = await benchEnvironment('compat');
  try {
    started.push(await spawnProcess('./stream-gateway.js', {}, /gateway listening/, [String(GATEWAY_PORT)]));
    const env = {
      ...bench.env,
      PORT: String(WEB_PORT),
      LOG_LEVEL: 'info',
      RUNS_PER_USER_LIMIT: '100000',
      GATEWAY_URL: `http://127.0.0.1:${GATEWAY_PORT}`,
      GATEWAY_API_KEY: 'bench',
    };
    started.push(await spawnProcess('../src/server.js', env, /web listening/));
    started.push(await spawnProcess('../workers/main.js', env, /worker ready/));
    const url = `http://127.0.0.1:${WEB_PORT}`;
    const { key } = await bench.user('bench@example.test');
    const agentName = 'bench_agent';
    const created = await post(`${url}/api/agents`, key, { name: agentName, model: 'bench-model', tools: [] });
    if (created.status !== 201) throw new Error(`agent: ${created.status} ${await created.text()}`);
    const agentId = ((await created.json()) as { id: string }).id;

    const runs = { '/api/react': react(url, key, agentId), '/v1/chat/completions': chatCompletions(url, key, agentId) };
    const sequential = await interleaved(runs, SEQUENTIAL, WARM_UP);
    const native = sequential['/api/react']!;
    const facade = sequential['/v1/chat/completions']!;
    console.log(`\nfirst token, ${SEQUENTIAL} sequential runs each (interleaved), ms:`);
    console.table({
      '/api/react': { p50: p50(native), p99: p99(native) },
      '/v1/chat/completions': { p50: p50(facade), p99: p99(facade) },
    });
    console.log(`facade adds ${round(p50(facade) - p50(native))} ms p50 (target ≤ 1 ms)`);

    const rates: Record<string, number[]> = { '/api/react': [], '/v1/chat/completions': [] };
    let errors = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? Object.keys(runs) : Object.keys(runs).reverse();
      for (const name of order) {
        const measured = await completedPerSecond(runs[name as keyof typeof runs], CLIENTS, ROUND_SECONDS);
        rates[name]!.push(measured.perSecond);
        errors += measured.errors;
      }
    }
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    console.log(`\ncompleted runs/s at ${CLIENTS} clients, ${ROUNDS} alternating rounds of ${ROUND_SECONDS} s each (errors: ${errors}):`);
    console.table(Object.fromEntries(Object.entries(rates).map(([name, values]) => [name, { 'runs/s': round(mean(values)), rounds: values.map((v) => round(v, 1)).join(' / ') }])));
    console.log(`facade rate ratio: ${round(mean(rates['/v1/chat/completions']!) / mean(rates['/api/react']!), 3)} (target ≥ 0.95)`);

    const mcp = await mcpCaller(url, key, agentName);
    try {
      const answers = await interleaved({ 'POST /api/runs + ?wait': backgroundRun(url, key, agentId), 'MCP tools/call': mcp.call }, ANSWERS, WARM_UP);
      const background = answers['POST /api/runs + ?wait']!;
      const tool = answers['MCP tools/call']!;
      console.log(`\ntime to the answer, ${ANSWERS} sequential runs each (interleaved), ms:`);
      console.table({ 'POST /api/runs + ?wait': { p50: p50(background), p99: p99(background) }, 'MCP tools/call': { p50: p50(tool), p99: p99(tool) } });
      console.log(`MCP tools/call against POST /api/runs + ?wait: ${round(p50(tool) - p50(background))} ms p50 (ratio ${round(p50(tool) / p50(background), 3)})`);
    } finally {
      await mcp.client.close();
    }
  } finally {
    for (const child of started.reverse()) await stop(child);
    await bench.drop();
  }
}
