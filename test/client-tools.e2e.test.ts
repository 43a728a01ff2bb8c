import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Proc, type Stack } from './support/stack.js';
import { politely } from './support/retry.js';
import { ofType, stream, type ReceivedEvent, type StreamResult } from './support/sse.js';
import { eventually } from './support/eventually.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { RunService } from '../src/runs/service.js';
import { leaseOptions } from '../src/engine/protocol-types.js';
import { runProtocol } from '../src/engine/run-protocol.js';
import { TestGateway } from './support/gateway.js';
import { chat, native, responses } from './support/gateway-frames.js';
import { TOOL_OUTPUT_MAX_BYTES } from '../src/shared/client-tools.js';

/**
 * Client tools (DESIGN §23) through built web and worker processes: a call of a client function
 * parks the run (`requires_action`, no worker held), the client's outputs resume the same run from
 * its checkpoint on any worker; races with a second output, a cancel, a worker's death; timeout.
 */
let stack: Stack;
let quick: Stack;
let receiver: WebhookReceiver;
let gateway: TestGateway;
beforeAll(async () => {
  [receiver, gateway] = await Promise.all([WebhookReceiver.start(), TestGateway.start()]);
  [stack, quick] = await Promise.all([
    startStack({ workers: 2, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '0', JOB_LOCK_MS: '5000', JOB_STALLED_INTERVAL_MS: '1000', GATEWAY_URL: gateway.url, GATEWAY_API_KEY: 'gw-test-key' } }),
    // Client tool outputs time out after 2 s here.
    startStack({ env: { LOCAL_MODEL_TOKEN_DELAY_MS: '0', CLIENT_TOOL_TIMEOUT_S: '2' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([stack?.stop(), quick?.stop()]);
  await Promise.all([receiver?.close(), gateway?.close()]);
});

const api = (on: Stack, key: string, method: string, path: string, body?: unknown) =>
  fetch(`${on.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (res) => ({
    status: res.status,
    body: (await res.json().catch(() => undefined)) as any,
  }));

const WEATHER = { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const TIME = { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' }, offset: { type: 'integer' } } } };
const CLIENT_ID = /^call_[0-9a-f]{24}$/;

async function startRun(on: Stack, key: string, body: Record<string, unknown>, onEvent: (event: ReceivedEvent) => void, mode = 'react'): Promise<StreamResult> {
  // A well-behaved client tries a 429 again after its Retry-After (three stacks boot beside each other here; issue 45).
  const res = await politely(() => stream(`${on.url}/api/${mode}`, { token: key, body, onEvent }), 5);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res;
}

const outputs = (on: Stack, key: string, runId: string, toolOutputs: unknown) => api(on, key, 'POST', `/api/runs/${runId}/tool-outputs`, { tool_outputs: toolOutputs });

/** Runs `act` each time the run parks for its client (its `status: requires_action`), with the client tool calls announced since the last park. */
function whenParked(act: (runId: string, calls: { id: string; name: string; arguments: Record<string, unknown> }[], park: number) => Promise<void>) {
  let runId = '';
  let pending: { id: string; name: string; arguments: Record<string, unknown> }[] = [];
  const acts: Promise<void>[] = [];
  const onEvent = (event: ReceivedEvent) => {
    if (event.type === 'run') runId = event.data.run_id;
    if (event.type === 'client_tool_calls') pending.push(...event.data.tool_calls);
    if (event.type === 'status' && event.data.status === 'requires_action') {
      acts.push(act(runId, pending, acts.length + 1));
      pending = [];
    }
  };
  return { onEvent, acted: () => Promise.all(acts), runId: () => runId };
}

const statusTypes = (events: ReceivedEvent[]) => events.map((e) => (e.type === 'status' ? `status:${e.data.status}` : e.type));

/** Every event once: ids are unique. */
const expectNoRepeats = (events: ReceivedEvent[]) => expect(new Set(events.map((e) => e.id)).size).toBe(events.length);

describe('a client tool call', () => {
  it('parks the run (row requires_action with required_action, events in order); the output resumes it and the model quotes it', async () => {
    const { key } = await stack.user();
    let row: any;
    let read: any;
    const flow = whenParked(async (runId, calls) => {
      row = await stack.knex('runs').where({ id: runId }).first();
      read = (await api(stack, key, 'GET', `/api/runs/${runId}`)).body;
      const posted = await outputs(stack, key, runId, [{ call_id: calls[0]!.id, output: 'sunny, 21 °C' }]);
      expect(posted).toEqual({ status: 202, body: { run_id: runId, status: 'resuming' } });
    });
    const res = await startRun(stack, key, { q: 'What is the weather? Ask get_weather for Paris', client_tools: [WEATHER] }, flow.onEvent);
    await flow.acted();
    const [announced] = ofType(res.events, 'client_tool_calls');
    const call = announced!.data.tool_calls[0]!;
    expect(call).toMatchObject({ name: 'get_weather', arguments: { city: 'Paris' } });
    expect(call.id).toMatch(CLIENT_ID);
    // The row said requires_action, with the calls, by the time the event was out (DESIGN §21).
    expect(row).toMatchObject({ status: 'requires_action', required_action: { tool_calls: [call] } });
    expect(read).toMatchObject({ status: 'requires_action', required_action: { tool_calls: [call] } });
    expect(statusTypes(res.events).slice(0, 7)).toEqual(['run', 'status:running', 'thought', 'client_tool_calls', 'status:requires_action', 'status:resumed', 'tool_result']);
    expect(ofType(res.events, 'tool_result')[0]!.data).toMatchObject({ call_id: call.id, name: 'get_weather', output: 'sunny, 21 °C', is_error: false });
    expect(ofType(res.events, 'answer')[0]!.data.content).toContain('The get_weather function returned "sunny, 21 °C".');
    expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
    expectNoRepeats(res.events);
    const after = (await api(stack, key, 'GET', `/api/runs/${flow.runId()}`)).body;
    expect(after).toMatchObject({ status: 'succeeded', required_action: null });
    // Answered already, or the run no longer parked: 409 not_requires_action.
    const late = await outputs(stack, key, flow.runId(), [{ call_id: call.id, output: 'again' }]);
    expect(late.status).toBe(409);
  });

  it('a second park of the same run gets its own calls (two client functions, one after the other)', async () => {
    const { key } = await stack.user();
    const flow = whenParked(async (runId, calls) => {
      expect(calls).toHaveLength(1);
      expect((await outputs(stack, key, runId, [{ call_id: calls[0]!.id, output: `${calls[0]!.name} done` }])).body.status).toBe('resuming');
    });
    const res = await startRun(stack, key, { q: 'Call get_weather and get_time for UTC', client_tools: [WEATHER, TIME] }, flow.onEvent);
    await flow.acted();
    const calls = ofType(res.events, 'client_tool_calls').flatMap((e) => e.data.tool_calls);
    expect(calls.map((c) => c.name)).toEqual(['get_weather', 'get_time']);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    const answer = ofType(res.events, 'answer')[0]!.data.content;
    expect(answer).toContain('The get_weather function returned "get_weather done".');
    expect(answer).toContain('The get_time function returned "get_time done".');
    expectNoRepeats(res.events);
  });

  it('agent tools and client tools mix in one run: the client call parks, the calculator runs after, the answer has both', async () => {
    const { key } = await stack.user();
    let toolCallsWhileParked = -1;
    const seen: ReceivedEvent[] = [];
    const flow = whenParked(async (runId, calls) => {
      toolCallsWhileParked = ofType(seen, 'tool_call').length;
      await outputs(stack, key, runId, [{ call_id: calls[0]!.id, output: 'rainy' }]);
    });
    const res = await startRun(stack, key, { q: 'What is 6*7? Then ask get_weather for Oslo', client_tools: [WEATHER] }, (event) => {
      seen.push(event);
      flow.onEvent(event);
    });
    await flow.acted();
    expect(toolCallsWhileParked).toBe(0);
    expect(ofType(res.events, 'tool_call').map((e) => e.data.name)).toEqual(['calculator']);
    const answer = ofType(res.events, 'answer')[0]!.data.content;
    expect(answer).toContain('42');
    expect(answer).toContain('"rainy"');
  });

  it('in a DAG, client calls of two nodes park the run together: the first output is recorded, the last resumes it', async () => {
    const { key } = await stack.user();
    const flow = whenParked(async (runId, calls) => {
      expect(calls.map((c) => c.name).sort()).toEqual(['get_time', 'get_weather']);
      const row = await stack.knex('runs').where({ id: runId }).first();
      expect(row.status).toBe('requires_action');
      expect(row.required_action.tool_calls.map((c: { id: string }) => c.id).sort()).toEqual(calls.map((c) => c.id).sort());
      expect((await outputs(stack, key, runId, [{ call_id: calls[0]!.id, output: 'first' }])).body.status).toBe('recorded');
      // Still parked: the first output alone does not wake it.
      expect((await stack.knex('runs').where({ id: runId }).first()).status).toBe('requires_action');
      expect((await outputs(stack, key, runId, [{ call_id: calls[1]!.id, output: 'second' }])).body.status).toBe('resuming');
    });
    const res = await startRun(stack, key, { q: 'Ask get_weather about Paris and ask get_time about Rome', client_tools: [WEATHER, TIME] }, flow.onEvent, 'dag');
    await flow.acted();
    const answer = ofType(res.events, 'answer')[0]!.data.content;
    expect(answer).toContain('"first"');
    expect(answer).toContain('"second"');
    expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
    expectNoRepeats(res.events);
  });

  it('an output sent as soon as the calls are announced (the row may still be parking) is taken, and the run resumes', async () => {
    const { key } = await stack.user();
    let runId = '';
    let posted: Promise<{ status: number; body: any }> | undefined;
    const res = await startRun(stack, key, { q: 'Ask get_weather for Cairo', client_tools: [WEATHER] }, (event) => {
      if (event.type === 'run') runId = event.data.run_id;
      if (event.type === 'client_tool_calls') posted = outputs(stack, key, runId, [{ call_id: event.data.tool_calls[0]!.id, output: 'hot' }]);
    });
    expect((await posted!).status).toBe(202);
    expect(ofType(res.events, 'answer')[0]!.data.content).toContain('"hot"');
    expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
  });

  it('two outputs for one call, raced: one 202 and one 409, and the tool result comes once', async () => {
    const { key } = await stack.user();
    const flow = whenParked(async (runId, calls) => {
      const race = await Promise.all(['a', 'b'].map((output) => outputs(stack, key, runId, [{ call_id: calls[0]!.id, output }])));
      expect(race.map((r) => r.status).sort()).toEqual([202, 409]);
      // The loser is refused either as an answered call or, when the woken run has already resumed, as a run that no
      // longer waits for outputs: a 409 both ways, and nothing of it reaches the run.
      expect(['tool_output_not_pending', 'not_requires_action']).toContain(race.find((r) => r.status === 409)!.body.error);
    });
    const res = await startRun(stack, key, { q: 'Ask get_weather for Lima', client_tools: [WEATHER] }, flow.onEvent);
    await flow.acted();
    expect(ofType(res.events, 'tool_result')).toHaveLength(1);
    expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
  });

  it.each(['output first', 'cancel first', 'together'])('an output racing a cancel (%s): the end is consistent, never an answer after an accepted cancel', async (order) => {
    const { key } = await stack.user();
    let outcome: { output: number; cancel: number } | undefined;
    const flow = whenParked(async (runId, calls) => {
      const output = () => outputs(stack, key, runId, [{ call_id: calls[0]!.id, output: 'sunny' }]).then((r) => r.status);
      const cancel = () => api(stack, key, 'POST', `/api/runs/${runId}/cancel`).then((r) => r.status);
      if (order === 'output first') outcome = { output: await output(), cancel: await cancel() };
      else if (order === 'cancel first') outcome = { cancel: await cancel(), output: await output() };
      else [outcome] = await Promise.all([output(), cancel()]).then(([o, c]) => [{ output: o, cancel: c }]);
    });
    const res = await startRun(stack, key, { q: 'Ask get_weather for Rome', client_tools: [WEATHER] }, flow.onEvent);
    await flow.acted();
    const done = res.events.at(-1)!;
    const row = await stack.knex('runs').where({ id: flow.runId() }).first();
    expect(done.type).toBe('done');
    expect(row.status).toBe((done.data as { status: string }).status);
    if (outcome!.cancel === 202) {
      expect(row.status).toBe('cancelled');
      expect(ofType(res.events, 'answer')).toHaveLength(0);
    } else {
      expect(outcome!.cancel).toBe(409);
      expect(row.status).toBe('succeeded');
    }
    if (outcome!.output === 409) expect(ofType(res.events, 'tool_result')).toHaveLength(0);
    if (order === 'cancel first') expect(outcome).toEqual({ cancel: 202, output: 409 });
    expectNoRepeats(res.events);
  });

  it('cancel while parked ends it at once: done cancelled, conversation freed', async () => {
    const { key } = await stack.user();
    const flow = whenParked(async (runId) => {
      expect((await api(stack, key, 'POST', `/api/runs/${runId}/cancel`)).status).toBe(202);
    });
    const res = await startRun(stack, key, { q: 'Ask get_weather for Bern', client_tools: [WEATHER] }, flow.onEvent);
    await flow.acted();
    expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'cancelled' } });
    expect((await stack.knex('runs').where({ id: flow.runId() }).first()).status).toBe('cancelled');
    const again = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'hi', conversation_id: res.headers.get('x-conversation-id') } });
    expect(again.status).toBe(200);
  });

  it('no output within CLIENT_TOOL_TIMEOUT_S: the run fails with client_tool_timeout', async () => {
    const { key } = await quick.user();
    const res = await startRun(quick, key, { q: 'Ask get_weather for Quito', client_tools: [WEATHER] }, () => {});
    expect(ofType(res.events, 'error')[0]!.data).toMatchObject({ code: 'client_tool_timeout' });
    expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'failed' } });
    expect(ofType(res.events, 'tool_result')).toHaveLength(0);
  });

  it('sends run.requires_action to webhooks', async () => {
    const { key, user } = await stack.user();
    const path = `/requires-action/${user.id}`;
    expect((await api(stack, key, 'POST', '/api/webhooks', { url: `${receiver.url}${path}`, events: ['run.requires_action', 'run.succeeded'] })).status).toBe(201);
    const flow = whenParked(async (runId, calls) => {
      const [parked] = await receiver.waitFor(path, 1);
      expect(JSON.parse(parked!.body)).toMatchObject({ type: 'run.requires_action', data: { run_id: runId, status: 'requires_action' } });
      await outputs(stack, key, runId, [{ call_id: calls[0]!.id, output: 'ok' }]);
    });
    await startRun(stack, key, { q: 'Ask get_weather for Kyiv', client_tools: [WEATHER] }, flow.onEvent);
    await flow.acted();
    const [, done] = await receiver.waitFor(path, 2);
    expect(JSON.parse(done!.body).type).toBe('run.succeeded');
  });

  it('a background run: GET ?wait answers once the run waits for the client (not after the whole wait), then once it ends', async () => {
    const { key } = await stack.user();
    const started = await api(stack, key, 'POST', '/api/runs', { mode: 'react', q: 'Ask get_weather for Lima', client_tools: [WEATHER] });
    expect(started.status).toBe(202);
    // A wait of 60 s outlasts the test's own timeout: only an answer at the park lets it pass.
    const parked = await api(stack, key, 'GET', `/api/runs/${started.body.run_id}?wait=60`);
    expect(parked.body).toMatchObject({ status: 'requires_action', required_action: { tool_calls: [{ name: 'get_weather', arguments: { city: 'Lima' } }] } });
    const [call] = parked.body.required_action.tool_calls;
    expect((await outputs(stack, key, started.body.run_id, [{ call_id: call.id, output: 'fog, 17 °C' }])).status).toBe(202);
    const done = await api(stack, key, 'GET', `/api/runs/${started.body.run_id}?wait=60`);
    expect(done.body).toMatchObject({ status: 'succeeded', required_action: null });
    expect(done.body.answer).toContain('fog, 17 °C');
  });

  it('findRequiringAction finds the user’s parked run by all of its call ids, and no one else’s', async () => {
    const { key, user } = await stack.user();
    const other = await stack.user();
    // Only its models are used here: the other parts stay unset.
    const unused = undefined as never;
    const runs = new RunService(stack.identity.models, unused, unused, unused, unused, unused, unused, unused);
    const flow = whenParked(async (runId, calls) => {
      const ids = calls.map((c) => c.id);
      expect((await runs.findRequiringAction(user.id, ids))?.id).toBe(runId);
      expect(await runs.findRequiringAction(other.user.id, ids)).toBeUndefined();
      expect(await runs.findRequiringAction(user.id, [...ids, 'call_000000000000000000000000'])).toBeUndefined();
      expect(await runs.findRequiringAction(user.id, [])).toBeUndefined();
      await outputs(stack, key, runId, calls.map((c) => ({ call_id: c.id, output: 'x' })));
    });
    await startRun(stack, key, { q: 'Ask get_weather for Nuuk', client_tools: [WEATHER] }, flow.onEvent);
    await flow.acted();
    expect(await runs.findRequiringAction(user.id, [])).toBeUndefined();
  });
});

describe('a gateway model', () => {
  const replies = {
    chat: { call: () => chat.toolCall('call_abc', 'get_weather', ['{"city": "Oslo"}']), text: () => chat.text(['Done.']) },
    responses: { call: () => responses.functionCall('call_abc', 'get_weather', ['{"city": "Oslo"}']), text: () => responses.text(['Done.']) },
    native: { call: () => native.functionCall('get_weather', { city: 'Oslo' }), text: () => native.text(['Done.']) },
  };

  it.each(['chat', 'responses', 'native'] as const)('is offered client tools in the %s wire format, parks on its call, and reads the output', async (format) => {
    const { key } = await stack.user();
    const model = `model-${crypto.randomUUID()}`;
    const agent = await api(stack, key, 'POST', '/api/agents', { name: 'gw', model, api_format: format });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    gateway.script(model, { frames: replies[format].call() }, { frames: replies[format].text() });
    const flow = whenParked(async (runId, calls) => {
      expect(calls).toEqual([expect.objectContaining({ name: 'get_weather', arguments: { city: 'Oslo' } })]);
      await outputs(stack, key, runId, [{ call_id: calls[0]!.id, output: 'snowing, -3 °C' }]);
    });
    const res = await startRun(stack, key, { q: 'Weather in Oslo?', agent_id: agent.body.id, client_tools: [WEATHER] }, flow.onEvent);
    await flow.acted();
    expect(ofType(res.events, 'answer')[0]!.data.content).toBe('Done.');
    const [first, second] = gateway.requestsFor(model);
    // The function with its schema went out with the request, and the output came back to the model.
    expect(JSON.stringify(first!.body)).toContain('"get_weather"');
    expect(JSON.stringify(first!.body)).toContain('"city"');
    expect(JSON.stringify(second!.body)).toContain('snowing, -3 °C');
  });
});

describe('deadlines of what a run waits on', () => {
  /** The run's Redis side as the engine drives it, both halves (the worker's requestApprovals, the web's decide and outputs). */
  const lease = () => runProtocol(stack.identity.redis, stack.identity.keys, leaseOptions(stack.identity.config.runs));
  /** A run's waits in Redis, asked for directly (the worker's requestApprovals), owned by attempt 1, at time 0 (before every deadline here, so none expires). */
  async function waits() {
    const { user } = await stack.user();
    const ref = { id: crypto.randomUUID(), conversationId: crypto.randomUUID(), userId: user.id };
    await stack.redis.hset(stack.identity.keys.runSequence(ref), 'owner', '1');
    return { ref, ask: (ids: string[], deadlineMs: number, kind: 'approval' | 'client') => lease().signals.requestApprovals(ref, '1', ids, deadlineMs, 3600, kind, 0) };
  }

  it.each(['approval', 'client'] as const)('a %s asked again keeps its first deadline; a later park of the same run gets a fresh one', async (kind) => {
    const { ask, ref } = await waits();
    expect((await ask(['a'], 1000, kind)).deadlines).toEqual([1000]);
    // A resumed attempt asking again for the same call keeps the deadline it parked with.
    expect((await ask(['a'], 5000, kind)).deadlines).toEqual([1000]);
    if (kind === 'approval') expect(await lease().signals.decide(ref, 'a', { decision: 'approve' })).toBe('all_decided');
    else expect((await lease().signals.recordToolOutputs(ref, [{ call_id: 'a', output: 'x' }])).outcome).toBe('all_answered');
    // The next step's calls, later in the same run: their own, fresh deadline.
    const second = await ask(['a', 'b'], 9000, kind);
    expect(second.deadlines).toEqual([1000, 9000]);
    expect(second.answers[1]).toBeUndefined();
    expect(second.answers[0]).toEqual(kind === 'approval' ? { decision: 'approve' } : { output: 'x' });
  });

  it('a person cannot approve a client tool call, nor a client answer a gated one', async () => {
    const { ask, ref } = await waits();
    await ask(['gated'], 1000, 'approval');
    await ask(['client'], 1000, 'client');
    expect(await lease().signals.decide(ref, 'client', { decision: 'approve' })).toBe('not_pending');
    expect(await lease().signals.recordToolOutputs(ref, [{ call_id: 'gated', output: 'x' }])).toEqual({ outcome: 'not_pending', callId: 'gated' });
  });
});

describe('hostile input', () => {
  it('client_tools: too many, bad names, parameters not an object or too large, duplicates, a platform tool’s name → 422', async () => {
    const { key } = await stack.user();
    const bad = [
      Array.from({ length: 65 }, (_, i) => ({ name: `t${i}` })),
      [{ name: 'has space' }],
      [{ name: '' }],
      [{ name: 'x'.repeat(65) }],
      [{ name: 'ok', parameters: 'object' }],
      [{ name: 'ok', parameters: [1] }],
      [{ name: 'ok', parameters: { type: 'object', description: 'x'.repeat(17 * 1024) } }],
      [{ name: 'ok', description: 'x'.repeat(1025) }],
      [{ name: 'ok', extra: true }],
      [{ name: 'dup' }, { name: 'dup' }],
      [{ name: 'calculator' }],
      [{ name: 'github__search' }],
      'get_weather',
    ];
    for (const clientTools of bad) {
      for (const path of ['/api/react', '/api/dag']) {
        const res = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ q: 'hi', client_tools: clientTools }) });
        expect(res.status, `${path} ${JSON.stringify(clientTools).slice(0, 80)}`).toBe(422);
        await res.body?.cancel();
      }
      expect((await api(stack, key, 'POST', '/api/runs', { mode: 'react', q: 'hi', client_tools: clientTools })).status).toBe(422);
    }
  });

  it('a client tool named like a tool the run has (remember, recall on an agent with memory) → 422 naming it (400 on /v1), nothing created', async () => {
    const { key, user } = await stack.user();
    const remembering = await api(stack, key, 'POST', '/api/agents', { name: 'remembers', memory: true });
    expect(remembering.status).toBe(201);
    const agentId = remembering.body.id as string;
    for (const name of ['remember', 'recall']) {
      const clientTools = [WEATHER, { name, parameters: { type: 'object', properties: { content: { type: 'string' } } } }];
      for (const path of ['/api/react', '/api/dag']) {
        const res = await api(stack, key, 'POST', path, { q: 'Remember that I like tea', agent_id: agentId, client_tools: clientTools });
        expect(res.status, `${path} ${name}`).toBe(422);
        expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'client_tools', 1, 'name'], msg: expect.stringContaining(`"${name}" clashes`) })]);
      }
      const background = await api(stack, key, 'POST', '/api/runs', { mode: 'react', q: 'Remember that I like tea', agent_id: agentId, client_tools: clientTools });
      expect(background.status).toBe(422);
      expect(background.body.detail[0].msg).toContain(`"${name}" clashes`);
      const v1 = await api(stack, key, 'POST', '/v1/chat/completions', { model: `agent:${agentId}`, messages: [{ role: 'user', content: 'Remember that I like tea' }], tools: clientTools.map((tool) => ({ type: 'function', function: tool })) });
      expect(v1.status).toBe(400);
      expect(v1.body.error).toMatchObject({ type: 'invalid_request_error', param: 'tools[1]', message: expect.stringContaining(`"${name}" clashes`) });
    }
    expect(await stack.knex('runs').where({ user_id: user.id })).toEqual([]);
    expect(await stack.knex('conversations').where({ user_id: user.id })).toEqual([]);
    // Without memory the run has no `remember`: the client's own is taken.
    expect((await api(stack, key, 'POST', '/api/runs', { mode: 'react', q: 'What is 2+2?', client_tools: [{ name: 'remember' }] })).status).toBe(202);
  });

  it('/tool-outputs: malformed bodies → 422; another user’s run → 404; a run not parked for its client → 409', async () => {
    const { key } = await stack.user();
    const other = await stack.user();
    const flow = whenParked(async (runId, calls) => {
      const id = calls[0]!.id;
      const malformed = [
        {},
        { tool_outputs: [] },
        { tool_outputs: Array.from({ length: 65 }, (_, i) => ({ call_id: `c${i}`, output: 'x' })) },
        { tool_outputs: [{ call_id: id, output: 42 }] },
        { tool_outputs: [{ call_id: id, output: { text: 'x' } }] },
        { tool_outputs: [{ call_id: id, output: 'x'.repeat(TOOL_OUTPUT_MAX_BYTES + 1) }] },
        { tool_outputs: [{ call_id: id, output: 'x', extra: 1 }] },
        { tool_outputs: [{ call_id: '', output: 'x' }] },
        { tool_outputs: [{ call_id: id, output: 'x' }, { call_id: id, output: 'y' }] },
        { tool_outputs: [{ call_id: id, output: 'x' }], extra: 1 },
        { tool_outputs: 'x' },
      ];
      // Past BODY_LIMIT_BYTES (1 MB by default) the body is refused before it is read: 413.
      expect((await outputs(stack, key, runId, [{ call_id: id, output: 'x'.repeat(1024 * 1024 + 1) }])).status).toBe(413);
      for (const body of malformed) expect((await api(stack, key, 'POST', `/api/runs/${runId}/tool-outputs`, body)).status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect((await outputs(stack, other.key, runId, [{ call_id: id, output: 'x' }])).status).toBe(404);
      const unknown = await outputs(stack, key, runId, [{ call_id: 'call_000000000000000000000000', output: 'x' }]);
      expect(unknown).toMatchObject({ status: 409, body: { error: 'tool_output_not_pending' } });
      // One unknown id among good ones: nothing is recorded.
      expect((await outputs(stack, key, runId, [{ call_id: id, output: 'x' }, { call_id: 'nope', output: 'y' }])).status).toBe(409);
      expect((await outputs(stack, key, runId, [{ call_id: id, output: 'x'.repeat(1000) }])).status).toBe(202);
    });
    const res = await startRun(stack, key, { q: 'Ask get_weather for Accra', client_tools: [WEATHER] }, flow.onEvent);
    await flow.acted();
    expect(ofType(res.events, 'tool_result')[0]!.data.output).toBe('x'.repeat(1000));
    const finished = await outputs(stack, key, flow.runId(), [{ call_id: 'call_1', output: 'x' }]);
    expect(finished).toMatchObject({ status: 409, body: { error: 'not_requires_action' } });
    expect((await outputs(stack, key, '00000000-0000-4000-8000-000000000000', [{ call_id: 'c', output: 'x' }])).status).toBe(404);
  });
});

describe('workers dying around a client tool output', () => {
  it('kill -9 of the workers while it is parked loses nothing: a new worker resumes it after the output', async () => {
    const { key } = await stack.user();
    const flow = whenParked(async (runId, calls) => {
      const [first, second] = stack.workers.splice(0, 2) as [Proc, Proc];
      await Promise.all([first.stop('SIGKILL'), second.stop('SIGKILL')]);
      await Promise.all([stack.startWorker(), stack.startWorker()]);
      expect((await outputs(stack, key, runId, [{ call_id: calls[0]!.id, output: 'foggy' }])).status).toBe(202);
    });
    const res = await startRun(stack, key, { q: 'Ask get_weather for Lisbon', client_tools: [WEATHER] }, flow.onEvent);
    await flow.acted();
    expect(ofType(res.events, 'answer')[0]!.data.content).toContain('"foggy"');
    expect(ofType(res.events, 'tool_result')).toHaveLength(1);
    expectNoRepeats(res.events);
  });

  it('the workers die right as the output lands: it holds, and the run resumes once on a new worker', async () => {
    const { key } = await stack.user();
    const flow = whenParked(async (runId, calls) => {
      const frozen = stack.workers.splice(0);
      for (const worker of frozen) worker.child.kill('SIGSTOP');
      expect((await outputs(stack, key, runId, [{ call_id: calls[0]!.id, output: 'windy' }])).body.status).toBe('resuming');
      await Promise.all(frozen.map((worker) => worker.stop('SIGKILL')));
      await Promise.all([stack.startWorker(), stack.startWorker()]);
    });
    const res = await startRun(stack, key, { q: 'Ask get_weather for Dublin', client_tools: [WEATHER] }, flow.onEvent);
    await flow.acted();
    expect(ofType(res.events, 'answer')[0]!.data.content).toContain('"windy"');
    expect(ofType(res.events, 'tool_result')).toHaveLength(1);
    expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
    expectNoRepeats(res.events);
    await eventually(async () => (await stack.knex('runs').where({ id: flow.runId() }).first()).status === 'succeeded', 'the row to say succeeded');
  });
});
