import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';

/**
 * Issue 44: a /v1 request refused for its body (400, 404, 415) leaves nothing behind: every check
 * of the body runs before a conversation or a run is written.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ workers: 1 });
});
afterAll(() => stack?.stop());

const post = (key: string, path: string, body: unknown) =>
  fetch(`${stack.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: await r.text() }));

const TOOL = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const cases: [string, string, unknown][] = [
  ['n', '/v1/chat/completions', { model: 'agent:default', n: 2, messages: [{ role: 'user', content: 'hi' }] }],
  ['clash', '/v1/chat/completions', { model: 'agent:default', tools: [{ type: 'function', function: { name: 'calculator', parameters: { type: 'object' } } }], messages: [{ role: 'user', content: 'hi' }] }],
  ['tool no id', '/v1/chat/completions', { model: 'agent:default', tools: [TOOL], messages: [{ role: 'user', content: 'hi' }, { role: 'tool', content: 'x' }] }],
  ['bad schema', '/v1/chat/completions', { model: 'agent:default', response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'nope' } } }, messages: [{ role: 'user', content: 'hi' }] }],
  ['image url', '/v1/chat/completions', { model: 'agent:default', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'http://x/y.png' } }] }] }],
  ['bad image', '/v1/chat/completions', { model: 'agent:default', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] }],
  ['last not user', '/v1/chat/completions', { model: 'agent:default', messages: [{ role: 'assistant', content: 'hi' }] }],
  ['not agent', '/v1/chat/completions', { model: 'agent:00000000-0000-0000-0000-000000000000', messages: [{ role: 'user', content: 'hi' }] }],
  ['resp clash', '/v1/responses', { model: 'agent:default', tools: [{ type: 'function', name: 'calculator', parameters: { type: 'object' } }], input: 'hi' }],
  ['resp bad schema', '/v1/responses', { model: 'agent:default', text: { format: { type: 'json_schema', name: 'x', schema: { type: 'nope' } } }, input: 'hi' }],
  ['resp fco', '/v1/responses', { model: 'agent:default', input: [{ type: 'function_call_output', call_id: 'c', output: 'x' }] }],
  ['tool_choice unknown', '/v1/chat/completions', { model: 'agent:default', tools: [TOOL], tool_choice: { type: 'function', function: { name: 'nope' } }, messages: [{ role: 'user', content: 'hi' }] }],
  ['oversized history', '/v1/chat/completions', { model: 'agent:default', messages: [{ role: 'user', content: 'word '.repeat(200000) }, { role: 'user', content: 'hi' }] }],
  ['nul', '/v1/chat/completions', { model: 'agent:default', messages: [{ role: 'user', content: 'a\u0000b' }] }],
  ['nul history', '/v1/chat/completions', { model: 'agent:default', messages: [{ role: 'assistant', content: 'a\u0000b' }, { role: 'user', content: 'hi' }] }],
  ['max_tokens 0', '/v1/chat/completions', { model: 'agent:default', max_tokens: 0, messages: [{ role: 'user', content: 'hi' }] }],
  ['metadata', '/v1/chat/completions', { model: 'agent:default', metadata: { a: 'x'.repeat(100000) }, messages: [{ role: 'user', content: 'hi' }] }],
  ['resp prev bad', '/v1/responses', { model: 'agent:default', previous_response_id: '00000000-0000-0000-0000-000000000000', input: 'hi' }],
  ['resp tool_choice', '/v1/responses', { model: 'agent:default', tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }], tool_choice: { type: 'function', name: 'g' }, input: 'hi' }],
  ['resp nul', '/v1/responses', { model: 'agent:default', input: 'a\u0000b' }],
  ['resp instructions nul', '/v1/responses', { model: 'agent:default', instructions: 'a\u0000b', input: 'hi' }],
];

describe('/v1 requests refused for their body', () => {
  it.each(cases)('%s: refused, and no conversation (nor run) is created', async (_name, path, body) => {
    const { key, user } = await stack.user();
    const res = await post(key, path, body);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const [conversations, runs] = await Promise.all([stack.knex('conversations').where({ user_id: user.id }).count('* as n').first(), stack.knex('runs').where({ user_id: user.id }).count('* as n').first()]);
    expect({ conversations: Number(conversations!.n), runs: Number(runs!.n) }).toEqual({ conversations: 0, runs: 0 });
  });
});
