import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { RUN_QUEUE } from '../src/shared/jobs.js';
import { Webhook } from 'standardwebhooks';
import { startStack, type Proc, type Stack } from './support/stack.js';
import { eventually } from './support/eventually.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { TestGateway } from './support/gateway.js';
import { chat } from './support/gateway-frames.js';

/**
 * Evals (DESIGN §24) through built web and worker processes: datasets and their uploads, eval runs
 * of an agent's version on the queue (each item an ordinary run carrying eval_id), scores, the
 * concurrency bound, cancel, comparison, webhooks, and every refusal a user could meet.
 */
let stack: Stack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  stack = await startStack({ workers: 1, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '2', DATASET_MAX_ITEMS: '40', DATASETS_PER_USER: '4', EVALS_ACTIVE_PER_USER: '3' } });
});
afterAll(async () => {
  await stack.stop();
  await receiver.close();
});

const ARITHMETIC = [
  { input: { q: 'What is 12*7?' }, expected: '84' },
  { input: { q: 'What is 6*7?' }, expected: '42' },
  { input: { q: 'What is 2+2?' }, expected: '5' },
];

/** A request with a raw body of `type` (JSONL, CSV, multipart…): status and parsed answer. */
async function send(key: string, path: string, body: BodyInit, type?: string) {
  const res = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...(type ? { 'content-type': type } : {}) }, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function setup(items: unknown[] = ARITHMETIC) {
  const { key, user } = await stack.user();
  const agent = (await stack.api(key, 'POST', '/api/agents', { name: 'calc' })).body;
  const dataset = (await stack.api(key, 'POST', '/api/datasets', { name: 'arithmetic' })).body;
  const added = await stack.api(key, 'POST', `/api/datasets/${dataset.id}/items`, items);
  expect(added.status).toBe(201);
  return { key, user, agent, dataset };
}

const ended = (key: string, id: string) =>
  eventually(async () => {
    const { body } = await stack.api(key, 'GET', `/api/evals/${id}`);
    return ['succeeded', 'failed', 'cancelled'].includes(body.status) && body;
  }, 'the eval to end', { timeoutMs: 60_000 });

const results = async (key: string, id: string) => (await stack.api(key, 'GET', `/api/evals/${id}/results?size=100`)).body.items as any[];

describe('datasets', () => {
  it('take items as a JSON list, JSONL, CSV and a multipart file, in order, all or none', async () => {
    const { key, dataset } = await setup();
    const jsonl = '{"input":{"q":"What is 3*3?"},"expected":"9","metadata":{"topic":"squares"}}\n\n{"input":{"q":"What is 4*4?"},"expected":16}\n';
    expect((await send(key, `/api/datasets/${dataset.id}/items`, jsonl, 'application/x-ndjson')).body).toMatchObject({ added: 2, item_count: 5 });
    const csv = 'q,expected,topic\n"What is 5*5, exactly?",25,squares\nWhat is 9-1?,8,minus\n';
    expect((await send(key, `/api/datasets/${dataset.id}/items`, csv, 'text/csv')).body).toMatchObject({ added: 2, item_count: 7 });
    const form = new FormData();
    form.append('file', new Blob(['{"input":{"q":"What is 7+7?"},"expected":"14"}\n']), 'more.jsonl');
    expect((await send(key, `/api/datasets/${dataset.id}/items`, form)).body).toMatchObject({ added: 1, item_count: 8 });
    const items = (await stack.api(key, 'GET', `/api/datasets/${dataset.id}/items?size=100`)).body;
    expect(items.total).toBe(8);
    expect(items.items.map((i: any) => i.input.q)).toEqual(['What is 12*7?', 'What is 6*7?', 'What is 2+2?', 'What is 3*3?', 'What is 4*4?', 'What is 5*5, exactly?', 'What is 9-1?', 'What is 7+7?']);
    expect(items.items[3]).toMatchObject({ expected: '9', metadata: { topic: 'squares' } });
    expect(items.items[4].expected).toBe(16);
    expect(items.items[5]).toMatchObject({ expected: '25', metadata: { topic: 'squares' } });
    // One bad item refuses the whole upload: nothing is added.
    const bad = await stack.api(key, 'POST', `/api/datasets/${dataset.id}/items`, [{ input: { q: 'fine' } }, { input: { question: 'no q' } }]);
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('items');
    expect((await stack.api(key, 'GET', `/api/datasets/${dataset.id}`)).body.item_count).toBe(8);
    // Edit and delete one; the count follows.
    const first = items.items[0];
    expect((await stack.api(key, 'PATCH', `/api/datasets/${dataset.id}/items/${first.id}`, { expected: '84!' })).body.expected).toBe('84!');
    expect((await stack.api(key, 'DELETE', `/api/datasets/${dataset.id}/items/${first.id}`)).status).toBe(204);
    expect((await stack.api(key, 'GET', `/api/datasets/${dataset.id}`)).body.item_count).toBe(7);
    expect((await stack.api(key, 'PATCH', `/api/datasets/${dataset.id}`, { name: 'renamed' })).body.name).toBe('renamed');
  });

  it('refuse what is not JSONL or CSV, items without input.q, bad lines, and more than DATASET_MAX_ITEMS (409, naming it)', async () => {
    const { key, dataset } = await setup();
    const path = `/api/datasets/${dataset.id}/items`;
    const cases: [BodyInit, string | undefined, number, string][] = [
      ['q\nhello', 'text/plain', 422, 'not JSONL or CSV'],
      ['<items/>', 'application/xml', 422, 'not JSONL or CSV'],
      ['{"input":{"q":"a"}}\n{not json}', 'application/x-ndjson', 422, 'line 2 is not JSON'],
      ['{"input":{}}', 'application/x-ndjson', 422, '"loc":["body","items",0,"input","q"]'],
      ['question,expected\nwhat?,1', 'text/csv', 422, '`q` column'],
      ['q,expected\n"unclosed,1', 'text/csv', 422, 'not valid CSV'],
      ['{"items": 3}', 'application/json', 422, 'list of items'],
      ['[]', 'application/json', 422, 'no items'],
      ['[{"input":{"q":"   "}}]', 'application/json', 422, '"loc":["body","items",0,"input","q"]'],
      ['[{"input":{"q":"x"},"expected":"' + 'e'.repeat(17_000) + '"}]', 'application/json', 422, 'expected is over'],
    ];
    for (const [body, type, status, text] of cases) {
      const res = await send(key, path, body, type);
      expect(res.status, `${type} ${String(body).slice(0, 40)}`).toBe(status);
      expect(JSON.stringify(res.body)).toContain(text);
    }
    const form = new FormData();
    form.append('file', new Blob(['hello']), 'notes.txt');
    const txt = await send(key, path, form);
    expect(txt.status).toBe(422);
    expect(txt.body.detail[0].msg).toContain('notes.txt is not JSONL or CSV');
    const many = Array.from({ length: 38 }, (_, i) => ({ input: { q: `q${i}` } }));
    const full = await stack.api(key, 'POST', path, many);
    expect(full.status).toBe(409);
    expect(full.body).toMatchObject({ error: 'dataset_full' });
    expect(full.body.message).toContain('DATASET_MAX_ITEMS');
    expect((await stack.api(key, 'GET', `/api/datasets/${dataset.id}`)).body.item_count).toBe(3);
  });

  it('a user holds at most DATASETS_PER_USER datasets, also when creates race (409 dataset_limit naming it)', async () => {
    const { key } = await stack.user();
    const answers = await Promise.all(Array.from({ length: 7 }, (_, i) => stack.api(key, 'POST', '/api/datasets', { name: `set ${i}` })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(4);
    const refused = answers.filter((a) => a.status === 409);
    expect(refused).toHaveLength(3);
    expect(refused[0]!.body).toMatchObject({ error: 'dataset_limit', message: expect.stringContaining('DATASETS_PER_USER') });
    expect((await stack.api(key, 'GET', '/api/datasets')).body.total).toBe(4);
  });

  it("another user's dataset and its items answer 404", async () => {
    const { dataset } = await setup();
    const other = await stack.user();
    expect((await stack.api(other.key, 'GET', `/api/datasets/${dataset.id}`)).status).toBe(404);
    expect((await stack.api(other.key, 'GET', `/api/datasets/${dataset.id}/items`)).status).toBe(404);
    expect((await stack.api(other.key, 'POST', `/api/datasets/${dataset.id}/items`, ARITHMETIC)).status).toBe(404);
    expect((await stack.api(other.key, 'DELETE', `/api/datasets/${dataset.id}`)).status).toBe(404);
    expect((await stack.api(other.key, 'GET', '/api/datasets')).body.total).toBe(0);
  });
});

describe('eval runs', () => {
  it('run each item as a background run carrying eval_id and the asked version, score it, and summarise', async () => {
    const { key, agent, dataset } = await setup();
    // v2 exists; the eval asks for v1.
    expect((await stack.api(key, 'PATCH', `/api/agents/${agent.id}`, { name: 'calc v2' })).body.version).toBe(2);
    const created = await stack.api(key, 'POST', '/api/evals', {
      dataset_id: dataset.id,
      agent_id: agent.id,
      agent_version: 1,
      scorers: [{ type: 'contains' }, { type: 'numeric' }, { type: 'regex', pattern: '\\b(84|42)\\b' }, { type: 'llm_judge', model: 'local', rubric: 'correct' }, { type: 'exact', name: 'exactly' }],
      concurrency: 2,
    });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ status: 'queued', progress: { done: 0, failed: 0, total: 3 }, agent_version: 1, concurrency: 2, mode: 'react' });
    const done = await ended(key, created.body.id);
    expect(done).toMatchObject({ status: 'succeeded', progress: { done: 3, failed: 0, total: 3 }, error: null });
    for (const name of ['contains', 'numeric', 'regex', 'llm_judge']) expect(done.summary[name]).toBeCloseTo(2 / 3, 5);
    expect(done.summary.exactly).toBe(0);
    expect(done.pass_rate).toBe(0);
    const items = await results(key, created.body.id);
    expect(items.map((r) => r.status)).toEqual(['scored', 'scored', 'scored']);
    expect(items.map((r) => r.scores.contains)).toEqual([1, 1, 0]);
    expect(items[0].output).toContain('84');
    // Administrators find an eval's runs.
    const admin = await stack.user('admin');
    const adminRuns = (await stack.api(admin.key, 'GET', `/api/admin/runs?eval_id=${created.body.id}`)).body;
    expect(adminRuns.items.map((r: any) => r.id).sort()).toEqual(items.map((i) => i.run_id).sort());
    for (const item of items) {
      const run = (await stack.api(key, 'GET', `/api/runs/${item.run_id}`)).body;
      expect(run).toMatchObject({ eval_id: created.body.id, agent_id: agent.id, agent_version: 1, status: 'succeeded', answer: item.output });
    }
  });

  it('never runs more than `concurrency` items at once', async () => {
    const items = Array.from({ length: 12 }, (_, i) => ({ input: { q: `What is ${i}*3?` }, expected: String(i * 3) }));
    const { key, agent, dataset } = await setup(items);
    const created = (await stack.api(key, 'POST', '/api/evals', { dataset_id: dataset.id, agent_id: agent.id, scorers: [{ type: 'numeric' }], concurrency: 3 })).body;
    expect((await ended(key, created.id)).progress).toEqual({ done: 12, failed: 0, total: 12 });
    // Each run's row is written after its item is taken and final before the item is scored: their spans overlap at most `concurrency` deep.
    const runs = await stack.knex('runs').where({ eval_id: created.id }).select('created_at', 'finished_at');
    expect(runs).toHaveLength(12);
    const edges = runs.flatMap((r) => [[r.created_at.getTime(), 1], [r.finished_at.getTime(), -1]]).sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
    let open = 0;
    let deepest = 0;
    for (const [, step] of edges) deepest = Math.max(deepest, (open += step!));
    expect(deepest).toBeGreaterThan(0);
    expect(deepest).toBeLessThanOrEqual(3);
  });

  it('cancel stops it: no item starts after, pending ones are cancelled, a second cancel is 409', async () => {
    const items = Array.from({ length: 40 }, (_, i) => ({ input: { q: `Tell me a long story about the number ${i}` }, expected: String(i) }));
    const { key, agent, dataset } = await setup(items);
    const created = (await stack.api(key, 'POST', '/api/evals', { dataset_id: dataset.id, agent_id: agent.id, scorers: [{ type: 'contains' }], concurrency: 1 })).body;
    await eventually(async () => (await stack.api(key, 'GET', `/api/evals/${created.id}`)).body.progress.done >= 1, 'one item done');
    const cancelled = await stack.api(key, 'POST', `/api/evals/${created.id}/cancel`);
    expect(cancelled.status).toBe(202);
    expect(cancelled.body.status).toBe('cancelled');
    expect((await stack.api(key, 'POST', `/api/evals/${created.id}/cancel`)).status).toBe(409);
    // The item running at the cancel ends one way or the other; nothing else starts.
    const settled = await eventually(async () => {
      const list = await results(key, created.id);
      return list.every((r) => r.status !== 'running' && r.status !== 'pending') && list;
    }, 'every item settled');
    const started = settled.filter((r) => r.run_id !== null).length;
    expect(settled.filter((r) => r.status === 'cancelled').length).toBeGreaterThanOrEqual(40 - started);
    expect(started).toBeLessThan(40);
    expect(await stack.knex('runs').where({ eval_id: created.id }).count({ n: '*' }).first()).toEqual({ n: String(started) });
    expect((await stack.api(key, 'GET', `/api/evals/${created.id}`)).body.status).toBe('cancelled');
  });

  it('compares two evals of the same dataset: means per scorer, per-item wins, losses and ties', async () => {
    const { key, agent, dataset } = await setup();
    const first = (await stack.api(key, 'POST', '/api/evals', { dataset_id: dataset.id, agent_id: agent.id, scorers: [{ type: 'contains' }, { type: 'numeric' }] })).body;
    // Version 2 answers in JSON with a field the local model fills with its own text: "84" is no longer said.
    await stack.api(key, 'PATCH', `/api/agents/${agent.id}`, { output_schema: { type: 'object', properties: { verdict: { type: 'boolean' } }, required: ['verdict'] } });
    const second = (await stack.api(key, 'POST', '/api/evals', { dataset_id: dataset.id, agent_id: agent.id, scorers: [{ type: 'contains' }, { type: 'json_schema', schema: { type: 'object', required: ['verdict'] } }] })).body;
    const [a, b] = await Promise.all([ended(key, first.id), ended(key, second.id)]);
    expect(b.agent_version).toBe(2);
    expect(b.summary.json_schema).toBe(1);
    const compared = await stack.api(key, 'GET', `/api/evals/compare?a=${first.id}&b=${second.id}`);
    expect(compared.status).toBe(200);
    expect(Object.keys(compared.body.scorers)).toEqual(['contains']);
    const contains = compared.body.scorers.contains;
    expect(contains.a).toBeCloseTo(a.summary.contains, 5);
    expect(contains.b).toBeCloseTo(b.summary.contains, 5);
    expect(contains.wins + contains.losses + contains.ties).toBe(3);
    expect(contains.wins).toBe(2);
    expect(compared.body.items).toEqual({ compared: 3, wins: 2, losses: 0, ties: 1 });
    expect(compared.body.a).toMatchObject({ id: first.id, agent_version: 1 });
    // Another dataset's eval does not compare.
    const other = await setup();
    const elsewhere = (await stack.api(other.key, 'POST', '/api/evals', { dataset_id: other.dataset.id, agent_id: other.agent.id, scorers: [{ type: 'contains' }] })).body;
    expect((await stack.api(key, 'GET', `/api/evals/compare?a=${first.id}&b=${elsewhere.id}`)).status).toBe(404);
    const mine = await setup();
    const sameUserOtherSet = (await stack.api(key, 'POST', '/api/datasets', { name: 'x' })).body;
    await stack.api(key, 'POST', `/api/datasets/${sameUserOtherSet.id}/items`, ARITHMETIC);
    const third = (await stack.api(key, 'POST', '/api/evals', { dataset_id: sameUserOtherSet.id, agent_id: agent.id, scorers: [{ type: 'contains' }] })).body;
    const mismatch = await stack.api(key, 'GET', `/api/evals/compare?a=${first.id}&b=${third.id}`);
    expect(mismatch.status).toBe(422);
    expect(JSON.stringify(mismatch.body)).toContain('same dataset');
    void mine;
  });

  it('sends eval.succeeded and eval.failed webhooks, signed like runs', async () => {
    const { key, agent, dataset } = await setup();
    const path = `/evals-${Date.now()}`;
    const webhook = (await stack.api(key, 'POST', '/api/webhooks', { url: `${receiver.url}${path}`, events: ['eval.succeeded', 'eval.failed'] })).body;
    const good = (await stack.api(key, 'POST', '/api/evals', { dataset_id: dataset.id, agent_id: agent.id, scorers: [{ type: 'contains' }] })).body;
    const [delivered] = await receiver.waitFor(path, 1);
    const event = new Webhook(webhook.secret).verify(delivered!.body, {
      'webhook-id': String(delivered!.headers['webhook-id']),
      'webhook-timestamp': String(delivered!.headers['webhook-timestamp']),
      'webhook-signature': String(delivered!.headers['webhook-signature']),
    }) as any;
    expect(event).toMatchObject({ type: 'eval.succeeded', data: { eval_id: good.id, dataset_id: dataset.id, agent_id: agent.id, status: 'succeeded', progress: { done: 3, total: 3 } } });
    expect(event.data.summary.contains).toBeCloseTo(2 / 3, 5);
    // Every item names an image that does not exist: each run is refused, so the eval fails.
    const broken = (await stack.api(key, 'POST', '/api/datasets', { name: 'broken' })).body;
    await stack.api(key, 'POST', `/api/datasets/${broken.id}/items`, [{ input: { q: 'look', image_ids: ['00000000-0000-4000-8000-000000000001'] } }]);
    const bad = (await stack.api(key, 'POST', '/api/evals', { dataset_id: broken.id, agent_id: agent.id, scorers: [{ type: 'contains' }] })).body;
    const failed = await ended(key, bad.id);
    expect(failed).toMatchObject({ status: 'failed', progress: { done: 1, failed: 1, total: 1 }, error: { code: 'all_items_failed' } });
    expect((await results(key, bad.id))[0]).toMatchObject({ status: 'failed', run_id: expect.any(String), passed: false, scores: { contains: 0 } });
    const [, second] = await receiver.waitFor(path, 2);
    expect(JSON.parse(second!.body)).toMatchObject({ type: 'eval.failed', data: { eval_id: bad.id, status: 'failed' } });
    const list = (await stack.api(key, 'GET', `/api/webhooks/${webhook.id}/deliveries`)).body.items;
    expect(list.map((d: any) => d.eval_id).sort()).toEqual([good.id, bad.id].sort());
  });
});

describe('scorers on real runs', () => {
  it('cites: an agent with a knowledge base cites its passages, one without does not', async () => {
    const { key } = await stack.user();
    const kb = (await stack.api(key, 'POST', '/api/knowledge-bases', { name: 'policies', chunk_size: 300, chunk_overlap: 0 })).body;
    const refunds = 'Refunds are issued within 30 days of purchase. Customers must keep the receipt to get a refund.';
    expect((await stack.api(key, 'POST', `/api/knowledge-bases/${kb.id}/documents`, { name: 'refunds.txt', content: refunds })).status).toBe(202);
    await eventually(async () => (await stack.api(key, 'GET', `/api/knowledge-bases/${kb.id}/documents`)).body.items.every((d: any) => d.status === 'ready'), 'the document ingested');
    const grounded = (await stack.api(key, 'POST', '/api/agents', { name: 'support', knowledge_base_ids: [kb.id] })).body;
    const bare = (await stack.api(key, 'POST', '/api/agents', { name: 'bare' })).body;
    const dataset = (await stack.api(key, 'POST', '/api/datasets', { name: 'policy questions' })).body;
    await stack.api(key, 'POST', `/api/datasets/${dataset.id}/items`, [{ input: { q: 'What is the refund policy?' }, expected: '30 days' }]);
    const scorers = [{ type: 'cites' }];
    const [withKb, without] = await Promise.all([grounded, bare].map(async (agent) => (await stack.api(key, 'POST', '/api/evals', { dataset_id: dataset.id, agent_id: agent.id, scorers })).body));
    expect((await ended(key, withKb.id)).summary.cites).toBe(1);
    expect((await ended(key, without.id)).summary.cites).toBe(0);
  });

  it('an agent deleted mid-eval fails it (agent_not_found) and cancels what had not started', async () => {
    const items = Array.from({ length: 40 }, (_, i) => ({ input: { q: `Tell me about the number ${i}` }, expected: String(i) }));
    const { key, agent, dataset } = await setup(items);
    const created = (await stack.api(key, 'POST', '/api/evals', { dataset_id: dataset.id, agent_id: agent.id, scorers: [{ type: 'contains' }], concurrency: 1 })).body;
    await eventually(async () => (await stack.api(key, 'GET', `/api/evals/${created.id}`)).body.progress.done >= 1, 'one item done');
    expect((await stack.api(key, 'DELETE', `/api/agents/${agent.id}`)).status).toBe(204);
    const failed = await ended(key, created.id);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'agent_not_found' } });
    expect(failed.progress.done).toBeLessThan(40);
    const list = await results(key, created.id);
    expect(list.some((r) => r.status === 'cancelled')).toBe(true);
    expect(list.every((r) => r.status !== 'pending' && r.status !== 'running')).toBe(true);
  });
});

describe('refusals', () => {
  it('422 for an unknown scorer, concurrency out of range, a bad pattern, repeated names, a missing version, an empty dataset', async () => {
    const { key, agent, dataset } = await setup();
    const base = { dataset_id: dataset.id, agent_id: agent.id, scorers: [{ type: 'contains' }] };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, scorers: [{ type: 'bleu' }] }, 'type must be one of'],
      [{ ...base, scorers: [] }, '"loc":["body","scorers"]'],
      [{ ...base, concurrency: 0 }, 'greater than or equal to 1'],
      [{ ...base, concurrency: 21 }, 'less than or equal to 20'],
      [{ ...base, concurrency: 2.5 }, 'concurrency'],
      [{ ...base, scorers: [{ type: 'regex', pattern: '(unclosed' }] }, '"loc":["body","scorers",0,"pattern"],"msg":"Value error, pattern is not a valid regular expression"'],
      [{ ...base, scorers: [{ type: 'contains' }, { type: 'contains' }] }, 'same name'],
      [{ ...base, scorers: [{ type: 'numeric', tolerance: -1 }] }, 'tolerance'],
      [{ ...base, scorers: [{ type: 'json_schema' }] }, 'schema'],
      [{ ...base, scorers: [{ type: 'llm_judge', model: 'gpt-judge', rubric: 'r' }] }, 'no model gateway'],
      [{ ...base, scorers: [{ type: 'llm_judge', model: 'local' }] }, 'rubric'],
      [{ ...base, agent_version: 9 }, 'no version 9'],
      [{ ...base, mode: 'swarm' }, 'mode'],
      [{ ...base, extra: true }, 'extra'],
      [{ ...base, dataset_id: 'not-a-uuid' }, 'dataset_id'],
    ];
    for (const [body, text] of cases) {
      const res = await stack.api(key, 'POST', '/api/evals', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(JSON.stringify(res.body)).toContain(text);
    }
    const empty = (await stack.api(key, 'POST', '/api/datasets', { name: 'empty' })).body;
    const none = await stack.api(key, 'POST', '/api/evals', { ...base, dataset_id: empty.id });
    expect(none.status).toBe(422);
    expect(JSON.stringify(none.body)).toContain('no items');
    expect((await stack.api(key, 'GET', '/api/evals')).body.total).toBe(0);
  });

  it("404 for another user's dataset, agent and eval; the active-eval bound answers 429 with Retry-After", async () => {
    const mine = await setup();
    const theirs = await setup();
    const scorers = [{ type: 'contains' }];
    expect((await stack.api(mine.key, 'POST', '/api/evals', { dataset_id: theirs.dataset.id, agent_id: mine.agent.id, scorers })).status).toBe(404);
    expect((await stack.api(mine.key, 'POST', '/api/evals', { dataset_id: mine.dataset.id, agent_id: theirs.agent.id, scorers })).status).toBe(404);
    const theirEval = (await stack.api(theirs.key, 'POST', '/api/evals', { dataset_id: theirs.dataset.id, agent_id: theirs.agent.id, scorers })).body;
    for (const path of [`/api/evals/${theirEval.id}`, `/api/evals/${theirEval.id}/results`]) expect((await stack.api(mine.key, 'GET', path)).status).toBe(404);
    expect((await stack.api(mine.key, 'POST', `/api/evals/${theirEval.id}/cancel`)).status).toBe(404);
    expect((await stack.api(mine.key, 'GET', `/api/evals/compare?a=${theirEval.id}&b=${theirEval.id}`)).status).toBe(404);
    // EVALS_ACTIVE_PER_USER is 3 here: four at once, the fourth is refused (the bound holds under the race).
    const body = { dataset_id: mine.dataset.id, agent_id: mine.agent.id, scorers, concurrency: 1 };
    const answers = await Promise.all(Array.from({ length: 5 }, () => fetch(`${stack.url}/api/evals`, { method: 'POST', headers: { authorization: `Bearer ${mine.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 202).length).toBeLessThanOrEqual(3);
    const refused = answers.find((r) => r.status === 429)!;
    expect(refused).toBeDefined();
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await refused.json()).message).toContain('EVALS_ACTIVE_PER_USER');
  });
});

describe('a worker gone mid-eval', () => {
  /** An eval of 30 items on two workers; `stop` ends the worker whose driver holds it once it is under way. */
  async function evalLosingItsDriver(stop: (driver: Proc) => Promise<unknown>) {
    const stack2 = await startStack({ workers: 2, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '40', JOB_LOCK_MS: '2000', JOB_STALLED_INTERVAL_MS: '1000' } });
    try {
      const { key } = await stack2.user();
      const agent = (await stack2.api(key, 'POST', '/api/agents', { name: 'calc' })).body;
      const dataset = (await stack2.api(key, 'POST', '/api/datasets', { name: 'crash' })).body;
      const items = Array.from({ length: 30 }, (_, i) => ({ input: { q: `What is ${i}+${i}?` }, expected: String(2 * i) }));
      await stack2.api(key, 'POST', `/api/datasets/${dataset.id}/items`, items);
      const created = (await stack2.api(key, 'POST', '/api/evals', { dataset_id: dataset.id, agent_id: agent.id, scorers: [{ type: 'numeric' }], concurrency: 3 })).body;
      // The worker whose driver took the eval says so.
      const driving = new RegExp(`"eval_id":"${created.id}"[^\\n]*"msg":"eval driven"`);
      const driver = await Promise.any(stack2.workers.map((worker) => worker.waitFor(driving, 20_000).then(() => worker)));
      await eventually(async () => (await stack2.api(key, 'GET', `/api/evals/${created.id}`)).body.progress.done >= 2, 'the eval under way');
      await stop(driver);
      const before = (await stack2.api(key, 'GET', `/api/evals/${created.id}`)).body;
      expect(before.status).toBe('running');
      expect(before.progress.done).toBeLessThan(30);
      const done = await eventually(async () => {
        const { body } = await stack2.api(key, 'GET', `/api/evals/${created.id}`);
        return ['succeeded', 'failed', 'cancelled'].includes(body.status) && body;
      }, 'the eval to end on the other worker', { timeoutMs: 60_000 });
      expect(done).toMatchObject({ status: 'succeeded', progress: { done: 30, total: 30 } });
      expect(done.summary.numeric).toBe(1);
      const rows = await stack2.knex('eval_items').where({ eval_id: created.id }).select('status', 'run_id', 'scores');
      expect(rows.filter((r) => r.status === 'scored' || r.status === 'failed')).toHaveLength(30);
      expect(rows.every((r) => r.scores !== null)).toBe(true);
      // One run per item, each named by its item: no item ran twice, none was lost.
      const runs = await stack2.knex('runs').where({ eval_id: created.id }).select('id', 'status');
      expect(runs).toHaveLength(30);
      expect(new Set(rows.map((r) => r.run_id))).toEqual(new Set(runs.map((r) => r.id)));
      expect(runs.every((r) => r.status === 'succeeded')).toBe(true);
    } finally {
      await stack2.stop();
    }
  }

  it('killed (SIGKILL): another worker takes the driver over once its lock lapses, follows the runs left running; no item lost or scored twice', async () => {
    await evalLosingItsDriver(async (driver) => {
      driver.child.kill('SIGKILL');
      await driver.exited;
    });
  }, 90_000);

  it('stopped (SIGTERM): the driver hands the eval back at once and exits; the other worker finishes it', async () => {
    await evalLosingItsDriver(async (driver) => expect(await driver.stop('SIGTERM')).toBe(0));
  }, 90_000);
});

describe('a run left queued without a job', () => {
  it('is queued again by the driver that takes the eval over, and the eval ends with that run', async () => {
    // No worker yet: the eval waits, and the test leaves it as a driver killed between a run's row and its job would.
    const orphaned = await startStack({ workers: 0 });
    try {
      const { key } = await orphaned.user();
      const agent = (await orphaned.api(key, 'POST', '/api/agents', { name: 'calc' })).body;
      const dataset = (await orphaned.api(key, 'POST', '/api/datasets', { name: 'orphan' })).body;
      await orphaned.api(key, 'POST', `/api/datasets/${dataset.id}/items`, ARITHMETIC.slice(0, 2));
      const created = (await orphaned.api(key, 'POST', '/api/evals', { dataset_id: dataset.id, agent_id: agent.id, scorers: [{ type: 'contains' }], concurrency: 1 })).body;
      const run = (await orphaned.api(key, 'POST', '/api/runs', { mode: 'react', q: ARITHMETIC[0]!.input.q, agent_id: agent.id })).body;
      const runQueue = new Queue(RUN_QUEUE, { connection: orphaned.redis, prefix: orphaned.identity.keys.bullPrefix(RUN_QUEUE) });
      await (await runQueue.getJob(run.run_id))!.remove();
      expect(await runQueue.getJob(run.run_id)).toBeUndefined();
      await orphaned.knex('runs').where({ id: run.run_id }).update({ eval_id: created.id });
      await orphaned.knex('eval_items').where({ eval_id: created.id, position: 1 }).update({ status: 'running', run_id: run.run_id, started_at: new Date() });
      await orphaned.knex('evals').where({ id: created.id }).update({ status: 'running', started_at: new Date() });
      const worker = await orphaned.startWorker();
      await worker.waitFor(/queued without a job; queued again/);
      const done = await eventually(async () => {
        const { body } = await orphaned.api(key, 'GET', `/api/evals/${created.id}`);
        return body.status !== 'queued' && body.status !== 'running' && body;
      }, 'the eval to end', { timeoutMs: 30_000 });
      expect(done).toMatchObject({ status: 'succeeded', progress: { done: 2, failed: 0, total: 2 } });
      const items = (await orphaned.api(key, 'GET', `/api/evals/${created.id}/results`)).body.items;
      expect(items[0]).toMatchObject({ run_id: run.run_id, status: 'scored', scores: { contains: 1 } });
      expect((await orphaned.api(key, 'GET', `/api/runs/${run.run_id}`)).body.status).toBe('succeeded');
      await runQueue.close();
    } finally {
      await orphaned.stop();
    }
  }, 60_000);
});

describe('llm_judge through a gateway model', () => {
  it('asks the judge model with the rubric, question, expected and given answers, and scores its 0-10 as 0..1', async () => {
    const gateway = await TestGateway.start();
    // The agent runs on the built-in model; only the judge is a gateway model.
    const judged = await startStack({ workers: 1, env: { GATEWAY_URL: gateway.url, GATEWAY_API_KEY: 'gw-test-key', GATEWAY_RETRY_BASE_MS: '1' } });
    try {
      const { key } = await judged.user();
      const agent = (await judged.api(key, 'POST', '/api/agents', { name: 'calc', model: 'local' })).body;
      const dataset = (await judged.api(key, 'POST', '/api/datasets', { name: 'judged' })).body;
      await judged.api(key, 'POST', `/api/datasets/${dataset.id}/items`, ARITHMETIC.slice(0, 2));
      gateway.script('judge-model', { frames: chat.text(['9']) }, { frames: chat.text(['Score: ', '6']) });
      const created = await judged.api(key, 'POST', '/api/evals', { dataset_id: dataset.id, agent_id: agent.id, scorers: [{ type: 'llm_judge', model: 'judge-model', rubric: 'Is the arithmetic right?' }], concurrency: 1 });
      expect(created.status).toBe(202);
      const done = await eventually(async () => {
        const { body } = await judged.api(key, 'GET', `/api/evals/${created.body.id}`);
        return body.status !== 'queued' && body.status !== 'running' && body;
      }, 'the judged eval to end', { timeoutMs: 30_000 });
      expect(done).toMatchObject({ status: 'succeeded', summary: { llm_judge: 0.75 } });
      const items = (await judged.api(key, 'GET', `/api/evals/${created.body.id}/results`)).body.items;
      expect(items.map((i: any) => i.scores.llm_judge)).toEqual([0.9, 0.6]);
      // The default threshold of a judge is 0.7.
      expect(items.map((i: any) => i.passed)).toEqual([true, false]);
      const asked = gateway.requests.filter((r) => r.model === 'judge-model');
      expect(asked).toHaveLength(2);
      const prompt = JSON.stringify(asked[0]!.body.messages);
      for (const part of ['Is the arithmetic right?', 'What is 12*7?', '84', items[0].output]) expect(prompt).toContain(JSON.stringify(part).slice(1, -1));
    } finally {
      await judged.stop();
      await gateway.close();
    }
  }, 60_000);
});
