import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { killAtFirstToken, startStack, type Stack } from './support/stack.js';
import { ofType, stream, type StreamResult } from './support/sse.js';
import { TestGateway } from './support/gateway.js';
import { chat } from './support/gateway-frames.js';
import { uniqueId } from './support/app.js';

/**
 * DESIGN §20, history longer than the model's window, on built web and worker processes: an agent's
 * context_window, compaction into the conversation's summary (the local model's, deterministic),
 * extended by later runs, every message kept, prompt tokens bounded as the conversation grows, a
 * message larger than the window refused before anything is stored; and, on a gateway model, what
 * the model is sent and a crash right after a compaction.
 */
let stack: Stack;
let key: string;
let userId: string;

beforeAll(async () => {
  stack = await startStack();
  const made = await stack.user();
  key = made.key;
  userId = made.user.id;
});
afterAll(() => stack?.stop());

const api = (method: string, path: string, body?: unknown) => stack.api(key, method, path, body);
const ask = (body: Record<string, unknown>) => stream(`${stack.url}/api/react`, { token: key, body });
const question = (i: number) => `Tell me about topic ${i}. It has several details worth remembering for later in this conversation, such as colours and names.`;

async function agent(fields: Record<string, unknown> = {}) {
  const res = await api('POST', '/api/agents', { name: `ctx-${uniqueId()}`, ...fields });
  expect(res.status).toBe(201);
  return res.body;
}

const done = (res: StreamResult) => ofType(res.events, 'done')[0]!.data;

describe('context_window on agents', () => {
  it('is stored and shown; null means the model default; out of range → 422', async () => {
    expect((await agent({ context_window: 1024 })).context_window).toBe(1024);
    expect((await agent({ context_window: 2_000_000 })).context_window).toBe(2_000_000);
    expect((await agent()).context_window).toBeNull();
    for (const context_window of [1023, 0, -5, 2_000_001, 1024.5, '4096', true]) {
      const res = await api('POST', '/api/agents', { name: 'bad', context_window });
      expect(res.status, JSON.stringify(context_window)).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'context_window']);
    }
  });
});

describe('a conversation longer than the window (local model, context_window 1,024)', () => {
  it('compacts into a summary extended run after run, keeps every message, and keeps prompt tokens bounded', async () => {
    const { id: agentId } = await agent({ context_window: 1024 });
    let conversationId: string | undefined;
    const runs: { compaction?: { summarized_messages: number; tokens_before: number; tokens_after: number }; prompt: number; through: string | null; summary: string | null }[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await ask({ q: question(i), agent_id: agentId, ...(conversationId ? { conversation_id: conversationId } : {}) });
      expect(done(res).status).toBe('succeeded');
      conversationId = res.headers.get('x-conversation-id')!;
      const record = await api('GET', `/api/conversations/${conversationId}`);
      const compaction = ofType(res.events, 'compaction')[0]?.data;
      if (compaction) {
        // Before the run's first model call: right after `status: running`.
        expect(res.events.map((e) => e.type).slice(0, 3)).toEqual(['run', 'status', 'compaction']);
      }
      runs.push({ compaction, prompt: done(res).usage.prompt_tokens, through: record.body.summary_through, summary: record.body.summary });
    }
    const compacted = runs.flatMap((r, i) => (r.compaction ? [{ ...r, i }] : []));
    expect(compacted.length).toBeGreaterThanOrEqual(2);
    expect(runs[0]!.summary).toBeNull();
    for (const { compaction } of compacted) {
      expect(compaction!.summarized_messages).toBeGreaterThanOrEqual(1);
      expect(compaction!.tokens_before).toBeGreaterThan(Math.floor(1024 * 0.8));
      expect(compaction!.tokens_after).toBeLessThanOrEqual(Math.floor(1024 * 0.8));
      expect(compaction!.tokens_after).toBeLessThan(compaction!.tokens_before);
    }

    // Messages are never deleted: all 60 are still there, and the summary points at one of them.
    const record = await api('GET', `/api/conversations/${conversationId}`);
    expect(record.status).toBe(200);
    const messages: { id: string; role: string; content: string }[] = record.body.messages;
    expect(messages).toHaveLength(60);
    expect(messages[0]!.content).toBe(question(0));
    const position = (id: string | null) => messages.findIndex((m) => m.id === id);
    expect(position(record.body.summary_through)).toBeGreaterThan(0);

    // Each compaction moves summary_through forward and extends the summary from there.
    const throughs = compacted.map((r) => position(r.through));
    expect(throughs).toEqual([...throughs].sort((a, b) => a - b));
    expect(new Set(throughs).size).toBe(throughs.length);
    for (const r of compacted) {
      // The summary covers through an answer; the question of that turn is its last user line.
      const covered = messages[position(r.through) - 1]!;
      expect(covered.role).toBe('user');
      expect(r.summary).toContain(`user: ${covered.content.split('. ')[0]}.`);
      expect(r.summary!.split('\n').at(-1)).toMatch(/^assistant: You asked "Tell me about topic \d+\.$/);
    }
    const [first, second] = compacted;
    const carried = first!.summary!.split('\n').at(-1)!;
    expect(second!.summary).toContain(carried);

    // Prompt tokens per run stay bounded as the conversation grows (the local model counts words).
    const late = runs.slice(20).filter((r) => !r.compaction).map((r) => r.prompt);
    const early = runs.slice(0, 10).map((r) => r.prompt);
    expect(Math.max(...late)).toBeLessThan(1024);
    expect(Math.max(...late)).toBeLessThan(Math.max(...early) * 1.5);
    // A run that compacted also paid for its summarising call.
    for (const { i } of compacted) if (runs[i + 1] && !runs[i + 1]!.compaction) expect(runs[i]!.prompt).toBeGreaterThan(runs[i + 1]!.prompt);

    // Token counts are kept on the messages for later runs.
    const uncounted = await stack.knex('messages').where({ conversation_id: conversationId }).whereNull('tokens').count<{ count: string }[]>('* as count');
    expect(Number(uncounted[0]!.count)).toBeLessThanOrEqual(1);
  });

  it('one message larger than the window → 422 naming the window and the count, and nothing is stored', async () => {
    const { id: agentId } = await agent({ context_window: 1024 });
    const counts = async () => {
      const [conversations, runs] = await Promise.all([
        stack.knex('conversations').where({ user_id: userId }).count<{ count: string }[]>('* as count'),
        stack.knex('runs').where({ user_id: userId }).count<{ count: string }[]>('* as count'),
      ]);
      const messages = await stack.knex('messages').join('conversations', 'conversations.id', 'messages.conversation_id').where('conversations.user_id', userId).count<{ count: string }[]>('* as count');
      return [conversations[0]!.count, runs[0]!.count, messages[0]!.count].map(Number);
    };
    const ok = await ask({ q: 'A first, short question.', agent_id: agentId });
    expect(done(ok).status).toBe('succeeded');
    const conversationId = ok.headers.get('x-conversation-id')!;
    const before = await counts();
    const huge = 'word '.repeat(1500);
    for (const body of [{ q: huge, agent_id: agentId }, { q: huge, conversation_id: conversationId }]) {
      const res = await ask(body);
      expect(res.status).toBe(422);
      const [issue] = res.body.detail;
      expect(issue.loc).toEqual(['body', 'q']);
      expect(issue.msg).toContain('1024');
      expect(issue.msg).toMatch(/1500|1501/);
      expect(issue.ctx).toMatchObject({ context_window: 1024 });
    }
    // Without an agent the local model's 8,192 applies.
    const local = await ask({ q: 'a.'.repeat(15_000) });
    expect(local.status).toBe(422);
    expect(local.body.detail[0].msg).toContain('8192');
    expect(await counts()).toEqual(before);
    // Just under the window fits: the whole history goes into the summary if need be.
    const big = await ask({ q: `${'word '.repeat(900)}end.`, conversation_id: conversationId });
    expect(done(big).status).toBe('succeeded');
  });
});

describe('on a gateway model', () => {
  let gateway: TestGateway;
  let gstack: Stack;
  let gkey: string;
  beforeAll(async () => {
    gateway = await TestGateway.start();
    gstack = await startStack({ env: { GATEWAY_URL: gateway.url, GATEWAY_API_KEY: 'gw-test-key', GATEWAY_RETRY_BASE_MS: '1', JOB_LOCK_MS: '2000', JOB_STALLED_INTERVAL_MS: '1000' } });
    ({ key: gkey } = await gstack.user());
  });
  afterAll(async () => {
    await gstack?.stop();
    await gateway?.close();
  });

  it('summarises with the run’s model, sends summary + recent turns, and a crash after the compaction neither loses nor redoes it', async () => {
    const model = `ctx-model-${uniqueId()}`;
    const created = await gstack.api(gkey, 'POST', '/api/agents', { name: 'gw', model, context_window: 4096, api_format: 'chat', instructions: 'Be helpful.' });
    expect(created.status).toBe(201);
    gateway.script(model, { frames: chat.text(['Hello there.']) });
    const first = await stream(`${gstack.url}/api/react`, { token: gkey, body: { q: 'Hello.', agent_id: created.body.id } });
    expect(done(first).status).toBe('succeeded');
    const conversationId = first.headers.get('x-conversation-id')!;
    // Twenty earlier turns of about 190 tokens each, as if they had been said: past 80% of the window, and all the oldest fit one summarising call.
    const turns = Array.from({ length: 20 }, (_, i) => ({
      id: randomUUID(),
      conversation_id: conversationId,
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `Turn ${i} mentions the ${i % 2 === 0 ? 'question' : 'answer'} about item ${i}.${' filler'.repeat(170)}`,
    }));
    for (const turn of turns) await gstack.knex('messages').insert(turn);

    gateway.script(
      model,
      { frames: chat.text(['SUMMARY: twenty turns about items.'], { usage: { prompt: 500, completion: 40 } }) },
      { frames: chat.text(['First', ' words']), stall: true },
      { frames: chat.text(['Resumed answer.'], { usage: { prompt: 300, completion: 5 } }) },
    );
    const [worker] = gstack.workers;
    const cut = await stream(`${gstack.url}/api/react`, { token: gkey, body: { q: 'What were we talking about?', conversation_id: conversationId }, ...killAtFirstToken(worker!) });
    const runId = cut.headers.get('x-run-id')!;
    const stored = await gstack.knex('conversations').where({ id: conversationId }).first();
    expect(stored.summary).toBe('SUMMARY: twenty turns about items.');
    await gstack.startWorker();
    const all = await stream(`${gstack.url}/api/runs/${runId}/events`, { method: 'GET', token: gkey });
    expect(ofType(all.events, 'answer')[0]!.data.content).toBe('Resumed answer.');
    expect(ofType(all.events, 'compaction')).toHaveLength(1);
    const { summarized_messages: summarized } = ofType(all.events, 'compaction')[0]!.data;

    // One summarising call for both attempts; its usage is the run's too (checkpointed with the summary).
    const sent = gateway.requestsFor(model).map((r) => r.body);
    expect(sent).toHaveLength(4);
    const [, summarizing, stalled, resumed] = sent;
    expect(summarizing.messages[0].content).toContain('running summary');
    expect(summarizing.messages[1].content).toContain('Turn 0 mentions');
    expect(summarizing.messages[1].content).toContain('Hello there.');
    expect(summarizing.tools ?? []).toEqual([]);
    for (const call of [stalled, resumed]) {
      expect(call.messages[0]).toMatchObject({ role: 'system' });
      expect(call.messages[0].content).toContain('Be helpful.');
      expect(call.messages[0].content).toContain('SUMMARY: twenty turns about items.');
      const shown = JSON.stringify(call.messages.slice(1));
      expect(shown).not.toContain('Turn 0 mentions');
      expect(shown).toContain('Turn 19 mentions');
      expect(call.messages.at(-1)).toMatchObject({ role: 'user', content: 'What were we talking about?' });
      // Summary + the turns after it + the question: 2 + (22 − summarized).
      expect(call.messages).toHaveLength(2 + 22 - summarized);
    }
    expect(stalled).toEqual(resumed);
    const run = await gstack.knex('runs').where({ id: runId }).first();
    expect(run).toMatchObject({ status: 'succeeded', crashes: 1 });
    expect(run.usage).toMatchObject({ prompt_tokens: 800, completion_tokens: 45 });
    const record = await gstack.api(gkey, 'GET', `/api/conversations/${conversationId}`);
    expect(record.body.summary).toBe('SUMMARY: twenty turns about items.');
    expect(record.body.messages).toHaveLength(2 + 20 + 2);
  });
});
