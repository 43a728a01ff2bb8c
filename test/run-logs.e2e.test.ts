import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Proc, type Stack } from './support/stack.js';
import { ofType, stream } from './support/sse.js';
import { TestGateway } from './support/gateway.js';
import { chat } from './support/gateway-frames.js';
import { uniqueId } from './support/app.js';
import { eventually } from './support/eventually.js';

/**
 * DESIGN §12: every log line of a run, on the web and on the worker, carries run_id,
 * conversation_id, user_id and the request_id of the request that started it.
 */
let gateway: TestGateway;
let stack: Stack;
let key: string;
let userId: string;

beforeAll(async () => {
  gateway = await TestGateway.start();
  stack = await startStack({ env: { GATEWAY_URL: gateway.url, GATEWAY_API_KEY: 'gw-test-key', GATEWAY_RETRY_BASE_MS: '5' } });
  const created = await stack.user();
  key = created.key;
  userId = created.user.id;
});
afterAll(async () => {
  await stack.stop();
  await gateway.close();
});

type Line = Record<string, unknown> & { msg: string };

function jsonLines(proc: Proc): Line[] {
  return proc.output
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);
}

/** The lines that mention the run anywhere (any field), once the worker has logged its end. */
async function linesAbout(runId: string) {
  await eventually(async () => jsonLines(stack.workers[0]!).some((l) => l.msg === 'run finished' && l.run_id === runId), 'the worker logging the run finished');
  const about = (proc: Proc) => jsonLines(proc).filter((line) => JSON.stringify(line).includes(runId));
  return { web: about(stack.webs[0]!), worker: about(stack.workers[0]!) };
}

function expectIds(lines: Line[], ids: { runId: string; conversationId: string; requestId: string }) {
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    expect({ msg: line.msg, run_id: line.run_id, conversation_id: line.conversation_id, user_id: line.user_id, request_id: line.request_id }).toEqual({
      msg: line.msg,
      run_id: ids.runId,
      conversation_id: ids.conversationId,
      user_id: userId,
      request_id: ids.requestId,
    });
  }
}

describe("a run's log lines share its ids in both processes", () => {
  it('a streamed run with a tool call: the request id the client sent, on every line', async () => {
    const requestId = `client-${uniqueId()}`;
    const res = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'What is 6*7?' }, headers: { 'x-request-id': requestId } });
    expect(ofType(res.events, 'done')[0]!.data.status).toBe('succeeded');
    const ids = { runId: res.headers.get('x-run-id')!, conversationId: res.headers.get('x-conversation-id')!, requestId };
    const { web, worker } = await linesAbout(ids.runId);
    expectIds(web, ids);
    expectIds(worker, ids);
    expect(web.map((l) => l.msg)).toContain('request');
    expect(worker.map((l) => l.msg)).toEqual(expect.arrayContaining(['tool executed', 'run finished']));
  });

  it('a background run: the request id the web chose travels in the job', async () => {
    const res = await fetch(`${stack.url}/api/runs`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'dag', q: 'What is 1+1 and what is 2+2?' }) });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { run_id: string; conversation_id: string };
    const ids = { runId: body.run_id, conversationId: body.conversation_id, requestId: res.headers.get('x-request-id')! };
    expect(ids.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const { web, worker } = await linesAbout(ids.runId);
    expectIds(web, ids);
    expectIds(worker, ids);
  });

  it("a gateway model's retry is logged as a line of the run", async () => {
    const model = `gw-${uniqueId()}`;
    const agent = await fetch(`${stack.url}/api/agents`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'gw', model }) });
    const agentId = ((await agent.json()) as { id: string }).id;
    gateway.script(model, { status: 503, body: { error: { message: 'busy' } } }, { frames: chat.text(['fine']) });
    const requestId = `retry-${uniqueId()}`;
    const res = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'hi', agent_id: agentId }, headers: { 'x-request-id': requestId } });
    expect(ofType(res.events, 'answer')[0]!.data.content).toBe('fine');
    const ids = { runId: res.headers.get('x-run-id')!, conversationId: res.headers.get('x-conversation-id')!, requestId };
    const { worker } = await linesAbout(ids.runId);
    const retry = jsonLines(stack.workers[0]!).find((l) => l.msg === 'gateway call failed; retrying' && l.model === model);
    expect(retry).toBeDefined();
    expect(worker).toContainEqual(retry);
    expectIds(worker, ids);
  });
});
