import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLogger } from '../src/logger.js';
import { DEFAULT_LEASE, type OutgoingEvent, type RunRef } from '../src/engine/protocol-types.js';
import { EventStream } from '../src/engine/event-stream.js';
import { withRunScripts } from '../src/engine/run-scripts.js';
import { RunExecutor } from '../workers/runs/executor.js';
import { WorkerLifecycle } from '../workers/runs/run-control.js';
import { LocalModel } from '../workers/models/local.js';
import { workerServices } from '../workers/runs/assembly.js';
import { benchEnvironment, percentile, readRun, round, spawnProcess, stop } from './support.js';

/**
 * `npm run bench -- connectors`. (1) What the platform adds to a connector tool call: the same MCP server
 * (server-everything, Streamable HTTP, on 127.0.0.1) called by the run's tool path and, in the same run right after
 * each call, directly by the SDK on a session of its own; p50/p99 over 200 calls on a run's open session, and the
 * first call of each run (which opens the run's session) on its own. (2) Runs/s of a one-tool-call run at 20 clients
 * through HTTP → queue → worker → SSE, against the same shape of run whose one tool is the built-in calculator.
 *
 * The platform's call is timed inside the worker code, not at the client: from the "tool executed" log line (written
 * just before the tool runs) to the moment its `tool_result` event is handed to Redis. Timing between the `tool_call`
 * and `tool_result` events at the client would add the relay's jitter on both ends (and `tool_call` leaves in a
 * batch after the call has started), which is of the size of the 2 ms being measured.
 */
const PORT = 3922;
const MCP_PORT = 3923;
const CALLS = 200;
/** The local model reads at most 20 tool mentions from a question. */
const CALLS_PER_RUN = 20;
const CLIENTS = 20;
const THROUGHPUT_RUNS = 1000;
const WARM_UP_RUNS = 50;
const SECRET = 'bench-connector-secret-value';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** server-everything in Streamable HTTP mode on 127.0.0.1:MCP_PORT. */
async function startEverything(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', `${root}test/support/listen-loopback.mjs`, `${root}node_modules/@modelcontextprotocol/server-everything/dist/index.js`, 'streamableHttp'], {
    env: { PATH: process.env.PATH, PORT: String(MCP_PORT) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => /loopback-listening/.test(chunk.toString()) && resolve());
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}`)));
  });
  return child;
}

/** The baseline: the SDK straight to the server, with the same header, on a session of its own. */
async function directClient(url: string): Promise<Client> {
  const client = new Client({ name: 'bench-direct', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { 'X-Api-Key': SECRET } } }));
  return client;
}

async function timed<T>(work: () => Promise<T>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

interface Pair {
  platform: number;
  direct: number;
}

/**
 * Marks each tool call's two ends (the log line before it runs, its result event reaching Redis) and, when a result
 * is published, makes the same call directly before letting the run go on: the run's next step waits for it.
 */
class CallTimer extends EventStream {
  readonly started = new Map<string, number>();
  readonly open: Pair[] = [];
  readonly first: Pair[] = [];
  direct?: Client;
  url = '';

  readonly logSink = {
    write: (line: string) => {
      const entry = JSON.parse(line) as { msg?: string; run_id?: string; call_id?: string };
      if (entry.msg === 'tool executed') this.started.set(`${entry.run_id}:${entry.call_id}`, performance.now());
    },
  };

  override async publish(run: RunRef, owner: string, events: OutgoingEvent[]): Promise<number> {
    const ended = performance.now();
    for (const event of events.filter((e) => e.type === 'tool_result')) {
      const { call_id: callId } = JSON.parse(event.data) as { call_id: string };
      const platform = ended - this.started.get(`${run.id}:${callId}`)!;
      const args = { message: `direct ${callId}` };
      if (callId === 'call_mcp_1') {
        // The run opened its session for this call: the baseline opens one too.
        const direct = await timed(async () => {
          const fresh = await directClient(this.url);
          await fresh.callTool({ name: 'echo', arguments: args });
          await fresh.close();
        });
        this.first.push({ platform, direct });
      } else {
        this.open.push({ platform, direct: await timed(() => this.direct!.callTool({ name: 'echo', arguments: args })) });
      }
    }
    return super.publish(run, owner, events);
  }
}

function rows(label: string, pairs: Pair[]) {
  const platform = pairs.map((p) => p.platform);
  const direct = pairs.map((p) => p.direct);
  const added = pairs.map((p) => p.platform - p.direct);
  return [
    { calls: label, path: 'platform (run tool path)', p50: round(percentile(platform, 50), 3), p99: round(percentile(platform, 99), 3) },
    { calls: label, path: 'SDK directly, same run', p50: round(percentile(direct, 50), 3), p99: round(percentile(direct, 99), 3) },
    { calls: label, path: 'difference per call', p50: round(percentile(added, 50), 3), p99: round(percentile(added, 99), 3) },
  ];
}

async function throughput(url: string, key: string, body: (n: number) => Record<string, unknown>): Promise<number> {
  for (let i = 0; i < WARM_UP_RUNS; i++) await readRun(url, key, body(-i - 1));
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < THROUGHPUT_RUNS) await readRun(url, key, body(next++));
    }),
  );
  return THROUGHPUT_RUNS / ((performance.now() - started) / 1000);
}

export async function run() {
  const bench = await benchEnvironment('connectors');
  const env = { ...bench.env, PORT: String(PORT), LOCAL_MODEL_TOKEN_DELAY_MS: '0', LOG_LEVEL: 'info', RUNS_PER_USER_LIMIT: '100000', OUTBOUND_ALLOW_PRIVATE: 'true' };
  const { identity } = bench;
  const { user, key } = await bench.user('bench@example.test');
  const url = `http://127.0.0.1:${PORT}`;
  const mcpUrl = `http://127.0.0.1:${MCP_PORT}/mcp`;
  const everything = await startEverything();
  const web = await spawnProcess('../src/server.js', env, /web listening/);
  const worker = await spawnProcess('../workers/main.js', env, /worker ready/);
  const timer = new CallTimer(withRunScripts(bench.redis), identity.keys, DEFAULT_LEASE);
  const inProcess = workerServices(bench.config, { knex: bench.knex, models: identity.models, redis: bench.redis, logger: createLogger('silent', 'bench'), events: timer });
  try {
    const api = async (path: string, body?: unknown) => {
      const res = await fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
      return (await res.json()) as { id: string; status?: string };
    };
    const connector = await api('/api/connectors', { name: 'everything', kind: 'mcp', url: mcpUrl, headers: { 'X-Api-Key': SECRET } });
    if ((await api(`/api/connectors/${connector.id}/test`)).status !== 'ok') throw new Error('the connector test failed');
    const agent = await api('/api/agents', { name: 'bench', connector_ids: [connector.id], max_iterations: CALLS_PER_RUN + 2 });

    // (1) In process: the worker's executor and connector runtime, timed as above.
    timer.url = mcpUrl;
    timer.direct = await directClient(mcpUrl);
    const executor = new RunExecutor({ ...inProcess.deps, logger: createLogger('info', 'bench', timer.logSink), modelFor: () => new LocalModel(0), defaultModel: 'local' });
    const lifecycle = new WorkerLifecycle();
    for (let r = 0; timer.open.length < CALLS; r++) {
      const query = Array.from({ length: CALLS_PER_RUN }, (_, c) => `everything__echo {"message": "run ${r} call ${c}"}`).join(' ');
      const conversationId = randomUUID();
      const runId = randomUUID();
      await identity.models.Conversation.query().insert({ id: conversationId, user_id: user.id, agent_id: agent.id });
      await identity.models.Run.query().insert({ id: runId, user_id: user.id, conversation_id: conversationId, agent_id: agent.id, mode: 'react', status: 'queued', query });
      await identity.models.Message.query().insert({ id: randomUUID(), conversation_id: conversationId, run_id: runId, role: 'user', content: query });
      await bench.redis.set(identity.keys.conversationActive(user.id, conversationId), runId);
      const cancel = new AbortController();
      await executor.execute({ runId, conversationId, userId: user.id, attempt: 1, crashes: 0 }, cancel, lifecycle.controlFor(cancel));
      // The first run warms up (and lists the tools, opening its session before its first call): not counted.
      if (r === 0) timer.open.length = timer.first.length = 0;
    }
    console.log(`\n(1) a connector tool call (echo) through a run vs the SDK straight to the same server, in the same run (ms)`);
    console.table([...rows(`${CALLS} on the run's open session`, timer.open.slice(0, CALLS)), ...rows(`${timer.first.length} first of a run (opens its session)`, timer.first)]);
    const open = timer.open.slice(0, CALLS);
    const overhead = percentile(open.map((p) => p.platform), 50) - percentile(open.map((p) => p.direct), 50);
    const ratio = percentile(open.map((p) => p.platform), 50) / percentile(open.map((p) => p.direct), 50);
    console.log(`overhead per call p50: ${round(overhead, 3)} ms (target ≤ 2 ms); ratio ${round(ratio)}×`);

    // (2) Throughput through the whole stack: one connector call per run, next to one calculator call per run.
    const viaConnector = await throughput(url, key, (n) => ({ q: `everything__echo {"message": "throughput ${n}"}`, agent_id: agent.id }));
    const viaCalculator = await throughput(url, key, (n) => ({ q: `What is ${n}+1?` }));
    console.log(`\n(2) ${THROUGHPUT_RUNS} one-tool-call runs by ${CLIENTS} concurrent clients (HTTP → queue → worker → SSE)`);
    console.table([
      { run: 'connector tool (echo)', 'runs/s': round(viaConnector, 1) },
      { run: 'built-in tool (calculator)', 'runs/s': round(viaCalculator, 1) },
    ]);
    console.log(`connector runs/s as a share of calculator runs/s: ${round(viaConnector / viaCalculator)}×`);
  } finally {
    await timer.direct?.close().catch(() => {});
    await inProcess.close();
    await Promise.all([stop(web), stop(worker), stop(everything)]);
    await bench.drop();
  }
}
