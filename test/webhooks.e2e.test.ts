import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startStack, type Stack } from './support/stack.js';
import { stream } from './support/sse.js';
import { eventually } from './support/eventually.js';
import { WebhookReceiver, type ReceivedWebhook } from './support/webhook-receiver.js';

/**
 * Webhooks (DESIGN §10) through built web and worker processes, to a receiver on 127.0.0.1 whose
 * signatures are checked with the `standardwebhooks` library (a verifier nobody here wrote).
 */
let stack: Stack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  stack = await startStack({
    workers: 2,
    env: { LOCAL_MODEL_TOKEN_DELAY_MS: '20', WEBHOOK_RETRY_BASE_MS: '300', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_MAX_ATTEMPTS: '4', JOB_LOCK_MS: '2000', JOB_STALLED_INTERVAL_MS: '1000' },
  });
});
afterAll(async () => {
  await stack.stop();
  await receiver.close();
});

type Delivery = { id: string; event: string; run_id: string; status: string; attempts: number; last_status_code: number | null; last_error: string | null };

const api = (key: string, method: string, path: string, body?: unknown) =>
  fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, headers: res.headers, body: (await res.json().catch(() => undefined)) as any }));

/** A user with a webhook on a path of the receiver of its own; the secret as shown once. */
async function subscriber(events = ['run.succeeded', 'run.failed', 'run.cancelled']) {
  const { key, user } = await stack.user();
  const path = `/hooks/${user.id}`;
  const created = await api(key, 'POST', '/api/webhooks', { url: `${receiver.url}${path}`, events });
  expect(created.status).toBe(201);
  return { key, user, path, webhook: created.body as { id: string; secret: string } };
}

function verify(secret: string, request: ReceivedWebhook) {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  }) as { type: string; timestamp: string; data: Record<string, unknown> };
}

const deliveries = async (key: string, webhookId: string): Promise<Delivery[]> => (await api(key, 'GET', `/api/webhooks/${webhookId}/deliveries`)).body.items;

/** The delivery list once `done` holds for it (a worker records an attempt after the receiver has answered). */
const settled = (key: string, webhookId: string, done: (items: Delivery[]) => boolean) =>
  eventually(async () => {
    const items = await deliveries(key, webhookId);
    return done(items) && items;
  }, 'the deliveries to settle');

const run = (key: string, q: string, body: Record<string, unknown> = {}) => stream(`${stack.url}/api/react`, { token: key, body: { q, ...body } });

describe('webhook endpoints', () => {
  it('shows the secret once, rotates it, and keeps other users out', async () => {
    const { key, webhook } = await subscriber();
    expect(webhook.secret).toMatch(/^whsec_/);
    const read = await api(key, 'GET', `/api/webhooks/${webhook.id}`);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('secret');
    expect(JSON.stringify(read.body)).not.toContain(webhook.secret.slice(6));
    const rotated = await api(key, 'POST', `/api/webhooks/${webhook.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(webhook.secret);
    const other = await stack.user();
    for (const [method, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/rotate-secret'], ['GET', '/deliveries']] as const) {
      expect((await api(other.key, method, `/api/webhooks/${webhook.id}${path}`, method === 'PATCH' ? { is_active: false } : undefined)).status).toBe(404);
    }
    expect((await api(key, 'GET', '/api/webhooks')).body.items.map((w: { id: string }) => w.id)).toEqual([webhook.id]);
    expect((await api(key, 'DELETE', `/api/webhooks/${webhook.id}`)).status).toBe(204);
    expect((await api(key, 'GET', `/api/webhooks/${webhook.id}`)).status).toBe(404);
    const audited = await stack.knex('audit_log').where({ target_id: webhook.id }).orderBy('id');
    expect(audited.map((e) => e.action)).toEqual(['webhook.create', 'webhook.rotate_secret', 'webhook.delete']);
    expect(JSON.stringify(audited)).not.toContain(webhook.secret.slice(6));
    expect(JSON.stringify(audited)).not.toContain(rotated.body.secret.slice(6));
  });

  it('restricted users may not write; keys scoped to anything less than full access may not call them', async () => {
    const restricted = await stack.user('restricted');
    expect((await api(restricted.key, 'POST', '/api/webhooks', { url: `${receiver.url}/x`, events: ['run.succeeded'] })).status).toBe(403);
    const { key } = await stack.user();
    const scoped = await api(key, 'POST', '/api/me/api-keys', { name: 'chat only', scopes: 'chat' });
    expect((await api(scoped.body.key, 'GET', '/api/webhooks')).status).toBe(403);
  });
});

describe('deliveries', () => {
  it('one signed delivery per finished run, with the run in its body; both secrets sign during a rotation', async () => {
    const { key, path, webhook } = await subscriber();
    const res = await run(key, 'What is 6*7?', { user_metadata: 'order-42' });
    const runId = res.headers.get('x-run-id')!;
    const [request] = await receiver.waitFor(path, 1);
    const event = verify(webhook.secret, request!);
    expect(event).toMatchObject({ type: 'run.succeeded', data: { run_id: runId, conversation_id: res.headers.get('x-conversation-id'), mode: 'react', status: 'succeeded', finish_reason: 'stop', error: null, user_metadata: 'order-42' } });
    expect(String(event.data.answer)).toContain('42');
    expect(event.data.usage).toMatchObject({ total_tokens: expect.any(Number) });
    const [delivery] = await settled(key, webhook.id, (items) => items[0]?.status === 'delivered');
    expect(delivery).toMatchObject({ id: request!.headers['webhook-id'], event: 'run.succeeded', run_id: runId, attempts: 1, last_status_code: 200 });

    const rotated = (await api(key, 'POST', `/api/webhooks/${webhook.id}/rotate-secret`)).body.secret as string;
    await run(key, 'What is 1+1?');
    const [, second] = await receiver.waitFor(path, 2);
    expect(verify(rotated, second!).type).toBe('run.succeeded');
    expect(verify(webhook.secret, second!).type).toBe('run.succeeded');
  });

  it('a receiver failing twice gets the same webhook-id on every attempt, with growing waits, then delivered', async () => {
    const { key, path, webhook } = await subscriber();
    receiver.script(path, 500, 503);
    await run(key, 'What is 2+3?');
    const requests = await receiver.waitFor(path, 3);
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const request of requests) expect(verify(webhook.secret, request).type).toBe('run.succeeded');
    // WEBHOOK_RETRY_BASE_MS=300: the first retry waits 300 ms, the second four times that.
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(300);
    expect(requests[2]!.at - requests[1]!.at).toBeGreaterThanOrEqual(1200);
    const [delivery] = await settled(key, webhook.id, (items) => items[0]?.status === 'delivered');
    expect(delivery).toMatchObject({ attempts: 3, last_status_code: 200, last_error: null });
  });

  it('a receiver that hangs is cut off at WEBHOOK_TIMEOUT_MS and tried again', async () => {
    const { key, path, webhook } = await subscriber();
    receiver.script(path, 'hang');
    await run(key, 'What is 3+4?');
    const requests = await receiver.waitFor(path, 2);
    expect(requests[1]!.headers['webhook-id']).toBe(requests[0]!.headers['webhook-id']);
    const [delivery] = await settled(key, webhook.id, (items) => items[0]?.status === 'delivered');
    expect(delivery!.attempts).toBe(2);
  });

  it('failed and cancelled runs are delivered as run.failed and run.cancelled', async () => {
    const { key, path, webhook } = await subscriber();
    const agent = await api(key, 'POST', '/api/agents', { name: 'one step', max_iterations: 1 });
    // Two sums need two steps: one step runs out of iterations.
    const failed = await run(key, 'What is 1+2 and what is 3+4?', { agent_id: agent.body.id });
    const [failure] = await receiver.waitFor(path, 1);
    expect(verify(webhook.secret, failure!)).toMatchObject({ type: 'run.failed', data: { run_id: failed.headers.get('x-run-id'), status: 'failed', error: { code: 'max_iterations' }, answer: null } });
    let runId = '';
    const controller = new AbortController();
    await stream(`${stack.url}/api/react`, {
      token: key,
      body: { q: 'a question long enough to stream for a while before it ends' },
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'run') runId = event.data.run_id;
        if (event.type === 'token' && !controller.signal.aborted) {
          controller.abort();
          void api(key, 'POST', `/api/runs/${runId}/cancel`).then((res) => expect(res.status).toBe(202));
        }
      },
    });
    const [, cancelled] = await receiver.waitFor(path, 2);
    expect(verify(webhook.secret, cancelled!)).toMatchObject({ type: 'run.cancelled', data: { run_id: runId, status: 'cancelled' } });
  });

  it('410 Gone switches the endpoint off; redeliver keeps the webhook-id', async () => {
    const { key, path, webhook } = await subscriber();
    receiver.script(path, 410);
    await run(key, 'What is 5+5?');
    await receiver.waitFor(path, 1);
    const [gone] = await settled(key, webhook.id, (items) => items[0]?.status === 'failed');
    expect(gone).toMatchObject({ attempts: 1, last_status_code: 410 });
    const endpoint = (await api(key, 'GET', `/api/webhooks/${webhook.id}`)).body;
    expect(endpoint).toMatchObject({ is_active: false, disabled_reason: expect.stringContaining('410') });
    expect(await stack.knex('audit_log').where({ action: 'webhook.disable', target_id: webhook.id })).toEqual([expect.objectContaining({ credential: 'system', details: expect.objectContaining({ reason: expect.stringContaining('410') }) })]);
    await run(key, 'What is 6+6?');
    expect((await api(key, 'POST', `/api/webhooks/${webhook.id}/deliveries/${gone!.id}/redeliver`)).status).toBe(409);

    expect((await api(key, 'PATCH', `/api/webhooks/${webhook.id}`, { is_active: true })).body).toMatchObject({ is_active: true, disabled_reason: null });
    const redelivered = await api(key, 'POST', `/api/webhooks/${webhook.id}/deliveries/${gone!.id}/redeliver`);
    expect(redelivered.status).toBe(202);
    const [, again] = await receiver.waitFor(path, 2);
    expect(again!.headers['webhook-id']).toBe(gone!.id);
    // The run finished while the endpoint was off has no delivery: nothing was subscribed then.
    expect((await deliveries(key, webhook.id)).length).toBe(1);
  });

  it('a delivery whose writer died before queueing it is queued by the sweeper and delivered once', async () => {
    const { key, user, path, webhook } = await subscriber();
    const res = await run(key, 'What is 7+7?');
    await receiver.waitFor(path, 1);
    const runId = res.headers.get('x-run-id')!;
    // What a worker killed between the final row and the queueing leaves: a delivery row, no job.
    const [orphan] = await stack.knex('webhook_deliveries')
      .insert({ id: crypto.randomUUID(), endpoint_id: webhook.id, run_id: runId, event: 'run.succeeded', payload: { type: 'run.succeeded', data: { run_id: runId, user: user.id } }, created_at: stack.knex.raw("now() - interval '1 minute'") })
      .returning('id');
    const requests = await receiver.waitFor(path, 2);
    expect(requests[1]!.headers['webhook-id']).toBe(orphan.id);
    expect(verify(webhook.secret, requests[1]!).type).toBe('run.succeeded');
    await settled(key, webhook.id, (items) => items.every((d) => d.status === 'delivered'));
    expect(receiver.at(path)).toHaveLength(2);
  });

  it('kill -9 the worker while it delivers: another worker finishes the same attempt sequence, once', async () => {
    const { key, path, webhook } = await subscriber();
    receiver.script(path, 'hang');
    await run(key, 'What is 8+8?');
    const [first] = await receiver.waitFor(path, 1);
    // The worker holding the delivery is the one that logged starting this attempt.
    const holder = await eventually(async () => stack.workers.find((w) => w.output.join('').includes(`"delivery_id":"${first!.headers['webhook-id']}"`)), 'the attempt in a worker log');
    await holder.stop('SIGKILL');
    stack.workers.splice(stack.workers.indexOf(holder), 1);
    const requests = await receiver.waitFor(path, 2);
    expect(requests[1]!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    const [delivery] = await settled(key, webhook.id, (items) => items[0]?.status === 'delivered');
    expect(delivery!.attempts).toBeGreaterThanOrEqual(1);
    expect(new Set(receiver.at(path).map((r) => r.headers['webhook-id'])).size).toBe(1);
    await stack.startWorker();
  });
});

describe('the outbound policy on deliveries (DESIGN §8)', () => {
  let strict: Stack;
  beforeAll(async () => {
    strict = await startStack({ env: { OUTBOUND_ALLOW_PRIVATE: 'false', WEBHOOK_MAX_ATTEMPTS: '1', LOCAL_MODEL_TOKEN_DELAY_MS: '0' } });
  });
  afterAll(() => strict.stop());

  const strictApi = (key: string, method: string, path: string, body?: unknown) =>
    fetch(`${strict.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (res) => ({ status: res.status, body: (await res.json().catch(() => undefined)) as any }));

  it('refuses private IP literals when saved, and names that resolve to them when delivering; 20 failed deliveries in a row switch the endpoint off', async () => {
    const { key } = await strict.user();
    for (const url of ['http://169.254.169.254/latest', 'http://127.0.0.1:9/x', 'http://[::ffff:10.0.0.1]/x', 'http://0x7f000001/x', 'ftp://example.com/x']) {
      const res = await strictApi(key, 'POST', '/api/webhooks', { url, events: ['run.succeeded'] });
      expect(res.status, url).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'url']);
    }
    // `localhost` is a name: it passes the save-time check and is refused on the address it resolves to.
    const port = new URL(receiver.url).port;
    const created = await strictApi(key, 'POST', '/api/webhooks', { url: `http://localhost:${port}/strict`, events: ['run.succeeded'] });
    expect(created.status).toBe(201);
    for (let i = 0; i < 20; i++) expect((await stream(`${strict.url}/api/react`, { token: key, body: { q: `What is ${i}+1?` } })).status).toBe(200);
    const items: Delivery[] = await eventually(async () => {
      const list = (await strictApi(key, 'GET', `/api/webhooks/${created.body.id}/deliveries?size=100`)).body.items as Delivery[];
      return list.length === 20 && list.every((d) => d.status === 'failed') && list;
    }, 'twenty failed deliveries');
    expect(items[0]!.last_error).toMatch(/refused/i);
    expect(receiver.at('/strict')).toHaveLength(0);
    const endpoint = await eventually(async () => {
      const body = (await strictApi(key, 'GET', `/api/webhooks/${created.body.id}`)).body;
      return body.is_active === false && body;
    }, 'the endpoint to be switched off');
    expect(endpoint.disabled_reason).toContain('20 deliveries in a row failed');
    expect(await strict.knex('audit_log').where({ action: 'webhook.disable', target_id: created.body.id })).toHaveLength(1);
  });
});
