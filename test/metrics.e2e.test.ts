import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { startTestApp, uniqueId, type TestApp } from './support/app.js';
import { ofType, stream, type ReceivedEvent } from './support/sse.js';
import { TestGateway } from './support/gateway.js';
import { chat } from './support/gateway-frames.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { eventually } from './support/eventually.js';
import { has, parseMetrics, total, type Sample } from './support/prometheus.js';

/**
 * DESIGN §12 metrics end to end: built web and worker processes, scraped over HTTP after real
 * runs (local model, a gateway model that needs a retry, a webhook, a cancel).
 */
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
let gateway: TestGateway;
let receiver: WebhookReceiver;
let stack: Stack;
let key: string;
/** Each worker's metrics address and credential; every worker counts its own runs, so worker series are summed. */
const workerScrapes: { url: string; credential: string }[] = [];

beforeAll(async () => {
  [gateway, receiver] = await Promise.all([TestGateway.start(), WebhookReceiver.start()]);
  stack = await startStack({
    workers: 0,
    env: { METRICS_TOKEN, GATEWAY_URL: gateway.url, GATEWAY_API_KEY: 'gw-test-key', GATEWAY_RETRY_BASE_MS: '5' },
  });
  const worker = await stack.startWorker({ WORKER_METRICS_PORT: '0' });
  workerScrapes.push({ url: `http://127.0.0.1:${(await worker.waitFor(/"metrics_port":(\d+)/))[1]}`, credential: METRICS_TOKEN });
  ({ key } = await stack.user());
});
afterAll(async () => {
  await stack.stop();
  await Promise.all([gateway.close(), receiver.close()]);
});

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${stack.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (res) => ({
    status: res.status,
    body: (await res.json().catch(() => undefined)) as any,
  }));

const get = (url: string, credential?: string) => fetch(`${url}/metrics`, { headers: credential ? { authorization: `Bearer ${credential}` } : {} });

async function scrape(url: string, credential = METRICS_TOKEN): Promise<Sample[]> {
  const res = await get(url, credential);
  expect(res.status).toBe(200);
  return parseMetrics(await res.text());
}
const scrapeWorkers = async () => (await Promise.all(workerScrapes.map(({ url, credential }) => scrape(url, credential)))).flat();

const run = (body: Record<string, unknown>, mode = 'react', onEvent?: (event: ReceivedEvent) => void) => stream(`${stack.url}/api/${mode}`, { token: key, body, onEvent });
const doneStatus = (events: ReceivedEvent[]) => ofType(events, 'done')[0]?.data.status;

describe('the scrape guard', () => {
  it.each([['web', () => stack.url], ['worker', () => workerScrapes[0]!.url]])('%s: no credential → 401, a wrong token or an admin key → 401, METRICS_TOKEN → 200', async (_name, url) => {
    const anonymous = await get(url());
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(((await anonymous.json()) as { error: string }).error).toBe('unauthorized');
    const wrong = await get(url(), `${METRICS_TOKEN}x`);
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: string }).error).toBe('invalid_token');
    // With METRICS_TOKEN set, only the token opens it.
    const { key: adminKey } = await stack.user('admin');
    expect((await get(url(), adminKey)).status).toBe(401);
    const ok = await get(url(), METRICS_TOKEN);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    const samples = parseMetrics(await ok.text());
    // Default process metrics, under the platform's prefix.
    expect(has(samples, 'agent_platform_process_cpu_user_seconds_total')).toBe(true);
    expect(has(samples, 'agent_platform_nodejs_eventloop_lag_seconds')).toBe(true);
    expect(samples.every((s) => s.name.startsWith('agent_platform_'))).toBe(true);
  });

  it('web /metrics answers only GET (405 otherwise)', async () => {
    const res = await fetch(`${stack.url}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(405);
  });
});

describe('without METRICS_TOKEN an admin credential scrapes', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('web: member → 403, admin JWT or admin-scoped key → 200, admin key of another scope → 403', async () => {
    expect((await app.request('GET', '/metrics')).status).toBe(401);
    const member = await app.signedInUser('member');
    expect((await app.request('GET', '/metrics', { token: member.token })).status).toBe(403);
    const admin = await app.signedInUser('admin');
    const scraped = await app.request('GET', '/metrics', { token: admin.token });
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('agent_platform_http_request_duration_seconds');
    const { key: adminScoped } = await app.services.apiKeys.create(admin.user.id, { name: 'prometheus', scopes: 'admin' });
    expect((await app.request('GET', '/metrics', { token: adminScoped })).status).toBe(200);
    const { key: chatScoped } = await app.services.apiKeys.create(admin.user.id, { name: 'chat', scopes: 'chat' });
    expect((await app.request('GET', '/metrics', { token: chatScoped })).status).toBe(403);
  });

  it('worker: the same rule on WORKER_METRICS_PORT', async () => {
    const worker = await stack.startWorker({ WORKER_METRICS_PORT: '0', METRICS_TOKEN: '' });
    const url = `http://127.0.0.1:${(await worker.waitFor(/"metrics_port":(\d+)/))[1]}`;
    expect((await get(url)).status).toBe(401);
    expect((await get(url, METRICS_TOKEN)).status).toBe(401);
    expect((await get(url, (await stack.user('member')).key)).status).toBe(403);
    const { key: adminKey } = await stack.user('admin');
    expect((await get(url, adminKey)).status).toBe(200);
    // From here on it runs jobs too: the series below are summed over both workers.
    workerScrapes.push({ url, credential: adminKey });
  });
});

/** A scrape's `name{labels}` counters minus an earlier scrape's. */
const moved = (after: Sample[], before: Sample[], name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);

describe('series move with real runs', () => {
  it('runs, requests, first tokens, models, tools, gateway retries and webhooks are counted', async () => {
    const hook = await api('POST', '/api/webhooks', { url: `${receiver.url}/metrics-${uniqueId()}`, events: ['run.succeeded'] });
    expect(hook.status).toBe(201);
    const model = `gw-${uniqueId()}`;
    const agent = await api('POST', '/api/agents', { name: 'gw', model });
    expect(agent.status).toBe(201);
    gateway.script(model, { status: 503, body: { error: { message: 'busy' } } }, { frames: chat.text(['fine']) });
    const [web0, workers0] = await Promise.all([scrape(stack.url), scrapeWorkers()]);

    const calc = await run({ q: 'What is 12*7?' });
    expect(doneStatus(calc.events)).toBe('succeeded');
    const dag = await run({ q: 'What is 2+2 and what is 3+3?' }, 'dag');
    expect(doneStatus(dag.events)).toBe('succeeded');
    const viaGateway = await run({ q: 'hi', agent_id: agent.body.id });
    expect(ofType(viaGateway.events, 'answer')[0]?.data.content).toBe('fine');
    const runId = calc.headers.get('x-run-id')!;
    expect((await api('GET', `/api/runs/${runId}`)).status).toBe(200);

    const workers1 = await eventually(async () => {
      const samples = await scrapeWorkers();
      return moved(samples, workers0, 'agent_platform_webhook_deliveries_total', { outcome: 'delivered' }) >= 3 && samples;
    }, 'three webhook deliveries counted');
    const web1 = await scrape(stack.url);

    // Web: runs started by mode, requests by declared route, first tokens as relayed.
    expect(moved(web1, web0, 'agent_platform_runs_started_total', { mode: 'react' })).toBe(2);
    expect(moved(web1, web0, 'agent_platform_runs_started_total', { mode: 'dag' })).toBe(1);
    expect(moved(web1, web0, 'agent_platform_http_request_duration_seconds_count', { route: '/api/react', method: 'POST', status: '200' })).toBe(2);
    expect(moved(web1, web0, 'agent_platform_http_request_duration_seconds_count', { route: '/api/runs/:id', method: 'GET', status: '200' })).toBe(1);
    expect(web1.filter((s) => s.labels.route?.includes(runId))).toEqual([]);
    expect(moved(web1, web0, 'agent_platform_first_token_seconds_count', { mode: 'react' })).toBe(2);
    expect(moved(web1, web0, 'agent_platform_first_token_seconds_sum', { mode: 'react' })).toBeGreaterThan(0);
    expect(has(web1, 'agent_platform_sse_streams_open')).toBe(true);
    // Queue counts are read at most every 5 s. Finished run jobs are dropped at once (DESIGN §13), so a
    // redelivery, which travels as a delivery job and is kept once completed, is what shows up.
    const [delivered] = (await api('GET', `/api/webhooks/${hook.body.id}/deliveries`)).body.items;
    expect((await api('POST', `/api/webhooks/${hook.body.id}/deliveries/${delivered.id}/redeliver`)).status).toBe(202);
    const completed = (samples: Sample[]) => total(samples, 'agent_platform_queue_jobs', { queue: 'webhook-deliveries', state: 'completed' });
    await eventually(async () => completed(await scrape(stack.url)) >= 1, 'web queue counts refreshed', { timeoutMs: 10_000, everyMs: 500 });
    expect(total(await scrape(stack.url), 'agent_platform_queue_jobs', { queue: 'agent-runs', state: 'completed' })).toBe(0);

    // Worker: runs finished and their durations by mode and status; model calls, tools, retries, deliveries.
    expect(moved(workers1, workers0, 'agent_platform_runs_finished_total', { mode: 'react', status: 'succeeded' })).toBe(2);
    expect(moved(workers1, workers0, 'agent_platform_runs_finished_total', { mode: 'dag', status: 'succeeded' })).toBe(1);
    expect(moved(workers1, workers0, 'agent_platform_run_duration_seconds_count', { mode: 'react', status: 'succeeded' })).toBe(2);
    expect(moved(workers1, workers0, 'agent_platform_model_call_duration_seconds_count', { provider: 'local', format: 'local', outcome: 'ok' })).toBeGreaterThanOrEqual(3);
    expect(moved(workers1, workers0, 'agent_platform_model_call_duration_seconds_count', { provider: 'gateway', format: 'chat', outcome: 'ok' })).toBe(1);
    expect(moved(workers1, workers0, 'agent_platform_gateway_retries_total', { reason: 'gateway_unavailable' })).toBe(1);
    expect(moved(workers1, workers0, 'agent_platform_gateway_retries_total')).toBe(1);
    expect(moved(workers1, workers0, 'agent_platform_tool_call_duration_seconds_count', { tool: 'calculator', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(moved(workers1, workers0, 'agent_platform_webhook_deliveries_total', { outcome: 'delivered' })).toBe(3);
    await eventually(async () => completed(await scrapeWorkers()) >= 1, 'worker queue counts refreshed', { timeoutMs: 10_000, everyMs: 500 });
  });

  it('an open stream is counted while it is open; a cancelled run is counted as cancelled', async () => {
    const gated = await api('POST', '/api/agents', { name: 'careful', tool_approval: ['calculator'] });
    expect(gated.status).toBe(201);
    const workers0 = await scrapeWorkers();
    let cancelled: Promise<unknown> | undefined;
    let runId = '';
    const res = await run({ q: 'What is 5*5?', agent_id: gated.body.id }, 'react', (event) => {
      if (event.type === 'run') runId = event.data.run_id;
      if (event.type !== 'approval_required') return;
      cancelled = (async () => {
        // Parked for approval, the stream stays open.
        const open = await scrape(stack.url);
        expect(total(open, 'agent_platform_sse_streams_open')).toBeGreaterThanOrEqual(1);
        expect((await api('POST', `/api/runs/${runId}/cancel`)).status).toBe(202);
      })();
    });
    await cancelled;
    expect(doneStatus(res.events)).toBe('cancelled');
    const workers1 = await eventually(async () => {
      const samples = await scrapeWorkers();
      return moved(samples, workers0, 'agent_platform_runs_finished_total', { mode: 'react', status: 'cancelled' }) === 1 && samples;
    }, 'the cancelled run counted');
    expect(moved(workers1, workers0, 'agent_platform_run_duration_seconds_count', { mode: 'react', status: 'cancelled' })).toBe(1);
    await eventually(async () => total(await scrape(stack.url), 'agent_platform_sse_streams_open') === 0, 'no stream left open');
  });
});
