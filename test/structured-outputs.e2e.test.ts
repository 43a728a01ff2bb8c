import OpenAI from 'openai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allOfChain, fanOut } from './support/costly-schemas.js';
import { startStack, type Stack } from './support/stack.js';
import { TestGateway } from './support/gateway.js';
import { chat, native, responses } from './support/gateway-frames.js';

/**
 * Structured outputs (DESIGN §23) through the built web and worker, driven by the official `openai`
 * SDK: chat's response_format and responses' text.format, streaming and not, against the local
 * model and gateway models (a test gateway that records the structured-output parameter each wire
 * format was sent); repair of an invalid answer; agents' versioned output_schema; hostile schemas.
 */
let stack: Stack;
let gateway: TestGateway;
beforeAll(async () => {
  gateway = await TestGateway.start();
  stack = await startStack({ workers: 1, env: { GATEWAY_URL: gateway.url, GATEWAY_RETRY_BASE_MS: '1' } });
});
afterAll(async () => {
  await stack?.stop();
  await gateway?.close();
});

const CALCULATION = {
  type: 'object',
  properties: { result: { type: 'number' }, explanation: { type: 'string' }, exact: { type: 'boolean' }, unit: { enum: ['none', 'cm'] } },
  required: ['result', 'explanation', 'exact', 'unit'],
  additionalProperties: false,
};
const validates = (schema: object, value: unknown) => {
  const validate = new Ajv2020({ strict: false }).compile(schema);
  const ok = validate(value);
  expect(validate.errors ?? []).toEqual([]);
  return ok;
};

let modelCount = 0;
/** A gateway model name of its own, so each test's scripted replies are its own. */
const gatewayModel = (format: string) => `gw-${format}-${++modelCount}`;

async function user() {
  const { key } = await stack.user();
  return { key, client: new OpenAI({ apiKey: key, baseURL: `${stack.url}/v1`, maxRetries: 0 }) };
}

async function agentOn(key: string, body: Record<string, unknown>): Promise<string> {
  const created = await stack.api(key, 'POST', '/api/agents', { name: 'Structured', ...body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id as string;
}

/** A background run to its end (GET ?wait until its status is final). */
async function runToEnd(key: string, body: Record<string, unknown>) {
  const started = await stack.api(key, 'POST', '/api/runs', { mode: 'react', ...body });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  for (;;) {
    const run = await stack.api(key, 'GET', `/api/runs/${started.body.run_id}?wait=30`);
    if (['succeeded', 'failed', 'cancelled', 'interrupted'].includes(run.body.status)) return run.body;
  }
}

const jsonSchemaFormat = { type: 'json_schema' as const, json_schema: { name: 'calculation', schema: CALCULATION, strict: true } };

describe('structured outputs with the local model', () => {
  it('chat: the content is JSON valid against the schema, filled from the answer (42 for 6*7), and the run keeps it as output', async () => {
    const { client, key } = await user();
    const { data, response } = await client.chat.completions.create({ model: 'agent:default', messages: [{ role: 'user', content: 'What is 6*7?' }], response_format: jsonSchemaFormat }).withResponse();
    const output = JSON.parse(data.choices[0]!.message.content!);
    expect(validates(CALCULATION, output)).toBe(true);
    expect(output).toEqual({ result: 42, explanation: 'The result of 6*7 is 42.', exact: true, unit: 'none' });
    const run = await stack.api(key, 'GET', `/api/runs/${response.headers.get('x-run-id')}`);
    expect(run.body.output).toEqual(output);
    expect(run.body.answer).toBe(data.choices[0]!.message.content);
  });

  it('chat streaming: the streamed content parses and validates', async () => {
    const { client } = await user();
    const stream = await client.chat.completions.create({ model: 'agent:default', messages: [{ role: 'user', content: 'What is 6*7?' }], response_format: jsonSchemaFormat, stream: true });
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
    expect(validates(CALCULATION, JSON.parse(content))).toBe(true);
    expect(JSON.parse(content).result).toBe(42);
  });

  it('responses: output_text is valid JSON, streaming and not; json_object gives an object', async () => {
    const { client } = await user();
    const format = { type: 'json_schema' as const, name: 'calculation', schema: CALCULATION, strict: true };
    const whole = await client.responses.create({ model: 'agent:default', input: 'What is 6*7?', text: { format } });
    expect(validates(CALCULATION, JSON.parse(whole.output_text))).toBe(true);
    const stream = await client.responses.create({ model: 'agent:default', input: 'What is 6*7?', text: { format }, stream: true });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    expect(JSON.parse(text)).toEqual(JSON.parse(whole.output_text));
    const object = await client.responses.create({ model: 'agent:default', input: 'Say hello', text: { format: { type: 'json_object' } } });
    expect(JSON.parse(object.output_text)).toEqual({ answer: expect.stringContaining('Say hello') });
  });

  it('native runs: output_schema on POST /api/runs (react and dag) and on /api/react, with output on the answer event', async () => {
    const { key } = await user();
    const schema = { type: 'object', properties: { total: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['total', 'tags'] };
    for (const mode of ['react', 'dag']) {
      const run = await runToEnd(key, { mode, q: 'What is 2+3?', output_schema: schema });
      expect(run.status).toBe('succeeded');
      expect(validates(schema, run.output)).toBe(true);
      expect(JSON.parse(run.answer)).toEqual(run.output);
    }
    const res = await fetch(`${stack.url}/api/react`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ q: 'What is 2+3?', output_schema: schema }) });
    const text = await res.text();
    const answer = text.split('\n\n').find((frame) => frame.includes('event: answer'))!;
    const data = JSON.parse(answer.split('\n').find((line) => line.startsWith('data: '))!.slice(6));
    expect(data.output).toEqual({ total: 5, tags: [expect.stringContaining('5')] });
    expect(JSON.parse(data.content)).toEqual(data.output);
  });
});

describe('structured outputs with gateway models', () => {
  const answer = JSON.stringify({ result: 42, explanation: 'six times seven', exact: true, unit: 'none' });
  const pieces = [answer.slice(0, 10), answer.slice(10)];

  it("chat format: response_format is sent in chat's spelling and the answer comes back as JSON, streaming and not", async () => {
    const { client, key } = await user();
    const model = gatewayModel('chat');
    const agentId = await agentOn(key, { model, api_format: 'chat' });
    gateway.script(model, { frames: chat.text(pieces) }, { frames: chat.text(pieces) });
    const whole = await client.chat.completions.create({ model: `agent:${agentId}`, messages: [{ role: 'user', content: 'Six times seven?' }], response_format: jsonSchemaFormat });
    expect(JSON.parse(whole.choices[0]!.message.content!)).toEqual(JSON.parse(answer));
    const stream = await client.chat.completions.create({ model: `agent:${agentId}`, messages: [{ role: 'user', content: 'Six times seven?' }], response_format: jsonSchemaFormat, stream: true });
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
    expect(JSON.parse(content)).toEqual(JSON.parse(answer));
    for (const request of gateway.requestsFor(model)) {
      expect(request.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'calculation', schema: CALCULATION, strict: true } });
    }
    expect(gateway.requestsFor(model)).toHaveLength(2);
  });

  it("responses format: text.format is sent in the Responses API's spelling, streaming and not", async () => {
    const { client, key } = await user();
    const model = gatewayModel('responses');
    const agentId = await agentOn(key, { model, api_format: 'responses' });
    gateway.script(model, { frames: responses.text(pieces) }, { frames: responses.text(pieces) });
    const format = { type: 'json_schema' as const, name: 'calculation', schema: CALCULATION, strict: true };
    const whole = await client.responses.create({ model: `agent:${agentId}`, input: 'Six times seven?', text: { format } });
    expect(JSON.parse(whole.output_text)).toEqual(JSON.parse(answer));
    const stream = await client.responses.create({ model: `agent:${agentId}`, input: 'Six times seven?', text: { format }, stream: true });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    expect(JSON.parse(text)).toEqual(JSON.parse(answer));
    const sent = gateway.requestsFor(model);
    expect(sent).toHaveLength(2);
    for (const request of sent) expect(request.body.text).toEqual({ format });
  });

  it("native format: an agent's output_schema is sent as responseMimeType and responseJsonSchema; json_object on chat as chat's json_object", async () => {
    const { client, key } = await user();
    const model = gatewayModel('native');
    const agentId = await agentOn(key, { model, api_format: 'native', output_schema: CALCULATION });
    gateway.script(model, { frames: native.text(pieces) });
    const run = await runToEnd(key, { agent_id: agentId, q: 'Six times seven?' });
    expect(run.output).toEqual(JSON.parse(answer));
    expect(gateway.requestsFor(model)[0]!.body.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: CALCULATION });
    const chatModel = gatewayModel('chat');
    const chatAgent = await agentOn(key, { model: chatModel, api_format: 'chat' });
    gateway.script(chatModel, { frames: chat.text(['{"a": 1}']) });
    const object = await client.chat.completions.create({ model: `agent:${chatAgent}`, messages: [{ role: 'user', content: 'Any object' }], response_format: { type: 'json_object' } });
    expect(JSON.parse(object.choices[0]!.message.content!)).toEqual({ a: 1 });
    expect(gateway.requestsFor(chatModel)[0]!.body.response_format).toEqual({ type: 'json_object' });
  });

  it('an invalid answer is repaired once with the errors; one that stays invalid fails the run with output_invalid', async () => {
    const { client, key } = await user();
    const model = gatewayModel('repair');
    const agentId = await agentOn(key, { model, api_format: 'chat' });
    gateway.script(model, { frames: chat.text(['The answer is 42.']) }, { frames: chat.text([answer]) });
    const repaired = await client.chat.completions.create({ model: `agent:${agentId}`, messages: [{ role: 'user', content: 'Six times seven?' }], response_format: jsonSchemaFormat });
    expect(JSON.parse(repaired.choices[0]!.message.content!)).toEqual(JSON.parse(answer));
    const [first, second] = gateway.requestsFor(model);
    const repairMessages = second!.body.messages as { role: string; content: string }[];
    expect(repairMessages.at(-2)).toEqual({ role: 'assistant', content: 'The answer is 42.' });
    expect(repairMessages.at(-1)!.content).toContain('not JSON');
    expect(second!.body.response_format).toEqual(first!.body.response_format);

    gateway.script(model, { frames: chat.text(['{"result": "many"}']) }, { frames: chat.text(['{"result": "still many"}']) });
    const failed = await runToEnd(key, { agent_id: agentId, q: 'Six times seven?', output_schema: CALCULATION });
    expect(failed.status).toBe('failed');
    expect(failed.error.code).toBe('output_invalid');
    expect(failed.error.message).toContain('/result must be number');
    expect(failed.output).toBeNull();
    expect(gateway.requestsFor(model)).toHaveLength(4);
  });
});

describe("agents' output_schema", () => {
  it('is versioned: a PATCH makes version 2, a restore brings version 1 back, and a run follows the version it started with', async () => {
    const { key } = await user();
    const first = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
    const second = { type: 'object', properties: { words: { type: 'string' } }, required: ['words'] };
    const agentId = await agentOn(key, { model: 'local', output_schema: first });
    expect((await runToEnd(key, { agent_id: agentId, q: 'What is 3*3?' })).output).toEqual({ n: 9 });
    const patched = await stack.api(key, 'PATCH', `/api/agents/${agentId}`, { output_schema: second });
    expect(patched.body).toMatchObject({ version: 2, output_schema: second });
    expect((await runToEnd(key, { agent_id: agentId, q: 'What is 3*3?' })).output).toEqual({ words: 'The result of 3*3 is 9.' });
    const versions = await stack.api(key, 'GET', `/api/agents/${agentId}/versions`);
    expect(versions.body.items.map((v: { version: number; output_schema: unknown }) => [v.version, v.output_schema])).toEqual([[2, second], [1, first]]);
    const restored = await stack.api(key, 'POST', `/api/agents/${agentId}/versions/1/restore`);
    expect(restored.body).toMatchObject({ version: 3, output_schema: first });
    // A run's own schema wins over its agent's.
    expect((await runToEnd(key, { agent_id: agentId, q: 'What is 3*3?', output_schema: second })).output).toEqual({ words: 'The result of 3*3 is 9.' });
    const cleared = await stack.api(key, 'PATCH', `/api/agents/${agentId}`, { output_schema: null });
    expect(cleared.body.output_schema).toBeNull();
    const prose = await runToEnd(key, { agent_id: agentId, q: 'What is 3*3?' });
    expect(prose).toMatchObject({ answer: 'The result of 3*3 is 9.', output: null });
  });
});


describe('hostile schemas and formats', () => {
  // 40 levels of JSON: within a body's nesting bound (64), past a schema's (32).
  let nested: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < 20; i++) nested = { type: 'object', properties: { deeper: nested } };
  const huge = { type: 'object', properties: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`property_${i}`, { type: 'string', description: 'x'.repeat(20) }])) };
  const bad: [string, unknown, string][] = [
    ['not an object', [{ type: 'string' }], 'must be a JSON Schema object'],
    ['over 64 KB', huge, 'larger than 64 KB'],
    ['a remote $ref', { type: 'object', properties: { a: { $ref: 'https://example.com/schema.json' } } }, 'remote $ref'],
    ['a keyword of the wrong type', { type: 'object', properties: 5 }, 'not a valid JSON Schema'],
    ['an unknown type', { type: 'strnig' }, 'not a valid JSON Schema'],
    ['nesting 40 levels deep', nested, 'nested deeper than 32'],
    // Issue 44: bounded by the work they cause, not their bytes.
    ['a definition of 150 properties referenced from 150 (8 KB)', fanOut(150, 150), 'subschemas'],
    ['an allOf/$ref chain of 19 links (1.3 KB, 2^19 paths)', allOfChain(19), 'subschemas'],
    ['a pattern with a backreference', { type: 'string', pattern: '^(a)\\1$' }, 'linear-time'],
  ];

  it.each(bad)('/v1 chat and responses answer 400 invalid_request_error naming the parameter for %s', async (_, schema, message) => {
    const { client } = await user();
    const refused = await client.chat.completions.create({ model: 'agent:default', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: schema as Record<string, unknown> } } }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    const error = (refused as InstanceType<typeof OpenAI.BadRequestError>).error as { type: string; param: string; message: string };
    expect(error).toMatchObject({ type: 'invalid_request_error', param: 'response_format.json_schema.schema' });
    expect(error.message).toContain(message);
    const refusedResponse = await client.responses.create({ model: 'agent:default', input: 'hi', text: { format: { type: 'json_schema', name: 'x', schema: schema as Record<string, unknown> } } }).catch((err: unknown) => err);
    expect(refusedResponse).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refusedResponse as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', param: 'text.format.schema' });
  });

  it.each(bad)('native bodies and agents answer 422 naming output_schema for %s', async (_, schema, message) => {
    const { key } = await user();
    for (const [path, body] of [['/api/runs', { mode: 'react', q: 'hi', output_schema: schema }], ['/api/react', { q: 'hi', output_schema: schema }], ['/api/agents', { name: 'a', output_schema: schema }]] as const) {
      const res = await stack.api(key, 'POST', path, body);
      expect(res.status, path).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'output_schema']);
      expect(res.body.detail[0].msg).toContain(message === 'must be a JSON Schema object' ? 'JSON Schema object' : message);
    }
  });

  it("an eval's json_schema scorer is refused the same way, at its place among the scorers", async () => {
    const { key } = await user();
    const dataset = await stack.api(key, 'POST', '/api/datasets', { name: 'd' });
    const agent = await agentOn(key, {});
    const chained = await stack.api(key, 'POST', '/api/evals', { dataset_id: dataset.body.id, agent_id: agent, scorers: [{ type: 'exact' }, { type: 'json_schema', schema: allOfChain(19) }] });
    expect(chained.status).toBe(422);
    expect(chained.body.detail).toMatchObject([{ loc: ['body', 'scorers', 1, 'schema'], msg: expect.stringContaining('subschemas') }]);
    const scorers = [{ type: 'exact' }, { type: 'json_schema', schema: { type: 'object' } }, { type: 'json_schema', name: 'typed', schema: { type: 'strnig' } }];
    const res = await stack.api(key, 'POST', '/api/evals', { dataset_id: dataset.body.id, agent_id: agent, scorers });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatchObject([{ loc: ['body', 'scorers', 2, 'schema'], msg: expect.stringContaining('not a valid JSON Schema') }]);
    const evals = await stack.api(key, 'GET', '/api/evals');
    expect(evals.body.items).toEqual([]);
  });

  it('a backtracking pattern checks a long answer at once (a linear-time engine): the run ends, and so does the next one', async () => {
    const { key } = await user();
    const question = `${'a'.repeat(5000)}!`;
    const schema = { type: 'object', properties: { answer: { type: 'string', pattern: '(a+)+$' } }, required: ['answer'] };
    const run = await runToEnd(key, { q: question, output_schema: schema });
    expect(run.status).toBe('failed');
    expect(run.error.code).toBe('output_invalid');
    expect(run.error.message).toContain('must match pattern');
    const next = await runToEnd(key, { q: 'What is 2+3?' });
    expect(next.status).toBe('succeeded');
  });

  it('a schema nested past the bound of any body is refused at the body, on /v1 and natively: 4xx, never a 500', async () => {
    const { key, client } = await user();
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 200; i++) deep = { type: 'object', properties: { deeper: deep } };
    const refused = await client.chat.completions.create({ model: 'agent:default', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: deep } } }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBeLessThan(500);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBeGreaterThanOrEqual(400);
    const native = await stack.api(key, 'POST', '/api/runs', { mode: 'react', q: 'hi', output_schema: deep });
    expect(native.status).toBe(422);
  });

  it('/v1 refuses a response_format of an unknown type and a json_schema without a schema, naming the parameter', async () => {
    const { client } = await user();
    const cases: [unknown, string][] = [
      [{ type: 'xml' }, 'response_format.type'],
      [{ type: 'json_schema', json_schema: { name: 'x' } }, 'response_format.json_schema.schema'],
      [{ type: 'json_schema' }, 'response_format.json_schema'],
      [{ type: 'json_schema', json_schema: { name: 'no spaces allowed', schema: {} } }, 'response_format.json_schema.name'],
      ['json', 'response_format'],
    ];
    for (const [format, param] of cases) {
      const refused = await client.chat.completions.create({ model: 'agent:default', messages: [{ role: 'user', content: 'hi' }], response_format: format as never }).catch((err: unknown) => err);
      expect(refused, JSON.stringify(format)).toBeInstanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', param });
    }
    const refused = await client.responses.create({ model: 'agent:default', input: 'hi', text: { format: { type: 'yaml' } as never } }).catch((err: unknown) => err);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', param: 'text.format.type' });
  });
});
