import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { ofType, stream, type StreamResult } from './support/sse.js';
import { TestGateway } from './support/gateway.js';
import { chat, native, responses } from './support/gateway-frames.js';
import { uniqueId } from './support/app.js';
import { eventually } from './support/eventually.js';
import { politely } from './support/retry.js';

/**
 * A gateway that takes no key (a local Ollama or vLLM): with GATEWAY_URL set and no
 * GATEWAY_API_KEY, the platform starts and every caller of the gateway (the three wire formats,
 * embeddings, reranking) sends no key at all. This gateway answers 401 to any request carrying one.
 */
let gateway: TestGateway;
let stack: Stack;
let key: string;

beforeAll(async () => {
  gateway = await TestGateway.start({ refuseKeys: true });
  stack = await startStack({ env: { MODEL_PROVIDER: 'gateway', GATEWAY_URL: gateway.url, GATEWAY_MODEL: 'default-model', GATEWAY_MAX_RETRIES: '0' } });
  ({ key } = await stack.user());
});
afterAll(async () => {
  await stack?.stop();
  await gateway?.close();
});

/** An API call as a well-behaved client makes it: a 429 (a busy shared machine) is tried again a second later. */
const api = (method: string, path: string, body?: unknown) => politely(async () => ({ ...(await stack.api(key, method, path, body)), headers: new Headers() }));

/** A streamed run, its status and refusal body asserted first so a failure says why. */
async function ask(body: Record<string, unknown>): Promise<StreamResult> {
  const res = await politely(() => stream(`${stack.url}/api/react`, { token: key, body }));
  expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: undefined });
  expect(ofType(res.events, 'error')).toEqual([]);
  return res;
}

const answerOf = (res: StreamResult) => ofType(res.events, 'answer')[0]?.data;
const doneOf = (res: StreamResult) => ofType(res.events, 'done')[0]?.data;

async function agentOn(format: string): Promise<{ id: string; model: string }> {
  const model = `model-${uniqueId()}`;
  const created = await api('POST', '/api/agents', { name: `no-key ${format}`, model, api_format: format });
  expect(created.status).toBe(201);
  return { id: created.body.id, model };
}

const keysSent = (model: string) => gateway.requestsFor(model).map((r) => r.headers.authorization ?? r.headers['x-goog-api-key'] ?? null);

describe('a gateway without a key', () => {
  it('serves a run without an agent on GATEWAY_MODEL (chat format), sending no Authorization header', async () => {
    gateway.script('default-model', { frames: chat.text(['No key', ' needed.']) });
    const res = await ask({ q: 'Say something' });
    expect(answerOf(res)).toMatchObject({ content: 'No key needed.' });
    expect(doneOf(res)).toMatchObject({ status: 'succeeded' });
    expect(keysSent('default-model')).toEqual([null]);
  });

  it.each([
    ['responses', responses.text(['Responses', ' without a key.'])],
    ['native', native.text(['Native', ' without a key.'])],
  ])('serves an agent on the %s format', async (format, frames) => {
    const agent = await agentOn(format);
    gateway.script(agent.model, { frames });
    const res = await ask({ q: 'Say something', agent_id: agent.id });
    expect(doneOf(res)).toMatchObject({ status: 'succeeded' });
    expect(answerOf(res)?.content).toMatch(/without a key\.$/);
    expect(keysSent(agent.model)).toEqual([null]);
  });

  it('embeds and reranks a knowledge base through it', async () => {
    const embedding = 'test-embed-64';
    const rerank = 'test-rerank';
    const created = await api('POST', '/api/knowledge-bases', { name: 'no-key kb', embedding_model: embedding, rerank_model: rerank });
    expect({ status: created.status, body: created.body }).toMatchObject({ status: 201 });
    const kb = created.body.id as string;
    expect((await api('POST', `/api/knowledge-bases/${kb}/documents`, { name: 'refunds.txt', content: 'Refunds are issued within 30 days to the original card.' })).status).toBe(202);
    const settled = await eventually(async () => {
      const doc = (await api('GET', `/api/knowledge-bases/${kb}/documents`)).body.items[0];
      return doc.status !== 'processing' && doc;
    }, 'the document to be ingested');
    expect(settled).toMatchObject({ status: 'ready', error: null });
    const found = await api('POST', `/api/knowledge-bases/${kb}/retrieve`, { query: 'refunds to my card' });
    expect(found.status).toBe(200);
    expect(found.body.records[0].content).toContain('Refunds');
    expect(gateway.requestsFor(rerank).length).toBeGreaterThan(0);
    expect([...keysSent(embedding), ...keysSent(rerank)].every((sent) => sent === null)).toBe(true);
  });
});
