import { describe, expect, it } from 'vitest';
import { LocalModel } from '../workers/models/local.js';
import type { ChatMessage, ModelResult } from '../workers/models/types.js';
import { toolsFor } from '../workers/tools/registry.js';
import type { Tool } from '../workers/tools/tool.js';
import { DEFAULT_SETTINGS } from '../src/shared/model-settings.js';
import { clientCallId } from '../src/shared/client-tools.js';

/** DESIGN §23 without a stack: the local model's client function calls, and the ids clients answer them by. */
const clientTool = (name: string, parameters: Record<string, unknown>): Tool => ({ name, description: '', parameters, client: true, run: () => Promise.reject(new Error('client tool')) });
const weather = clientTool('get_weather', { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' }, metric: { type: 'boolean' } }, required: ['city'] });
const tools = [...toolsFor(['calculator', 'current_time']), weather];
const model = new LocalModel(0);

async function complete(messages: ChatMessage[], offered = tools): Promise<ModelResult & { said: string }> {
  let said = '';
  const sink = { token: async (text: string) => void (said += text), thought: async () => {}, notice: async () => {} };
  const result = await model.complete({ model: 'local', settings: DEFAULT_SETTINGS, messages, tools: offered, signal: new AbortController().signal }, sink);
  return { ...result, said };
}

describe('the local model and client functions', () => {
  it('calls a client function the question names, before the calculator, with arguments from its schema', async () => {
    const result = await complete([{ role: 'user', content: 'What is 2+3? Use get_weather for 5 days in Paris' }]);
    expect(result.toolCalls).toEqual([{ id: 'call_client_1', name: 'get_weather', arguments: { city: 'Paris', days: 5, metric: true } }]);
  });

  it('after the output it goes on (the calculator), then answers quoting the output', async () => {
    const question: ChatMessage = { role: 'user', content: 'What is 2+3? Use get_weather for Paris' };
    const call = { id: 'call_client_1', name: 'get_weather', arguments: { city: 'Paris' } };
    const next = await complete([question, { role: 'assistant', content: '', toolCalls: [call] }, { role: 'tool', toolCallId: call.id, name: 'get_weather', content: 'sunny, 21 °C' }]);
    expect(next.toolCalls.map((c) => c.name)).toEqual(['calculator']);
    const calc = next.toolCalls[0]!;
    const answer = await complete([
      question,
      { role: 'assistant', content: '', toolCalls: [call] },
      { role: 'tool', toolCallId: call.id, name: 'get_weather', content: 'sunny, 21 °C' },
      { role: 'assistant', content: '', toolCalls: [calc] },
      { role: 'tool', toolCallId: calc.id, name: 'calculator', content: '5' },
    ]);
    expect(answer.toolCalls).toEqual([]);
    expect(answer.text).toContain('The get_weather function returned "sunny, 21 °C".');
    expect(answer.text).toContain('The result of 2+3 is 5.');
    expect(answer.said).toBe(answer.text);
  });

  it('does not call a function the question does not name as a word of its own, nor one it was not offered', async () => {
    expect((await complete([{ role: 'user', content: 'Tell me about get_weather_history in Rome' }])).toolCalls).toEqual([]);
    expect((await complete([{ role: 'user', content: 'Use get_weather for Rome' }], toolsFor(['calculator']))).toolCalls).toEqual([]);
  });
});

describe('client call ids', () => {
  it('are call_ and 24 hex digits, the same for the same run and call, different across runs and calls', () => {
    const run = '6f1c1a3e-0000-4000-8000-000000000001';
    const id = clientCallId(run, 'call_1');
    expect(id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(clientCallId(run, 'call_1')).toBe(id);
    expect(clientCallId('6f1c1a3e-0000-4000-8000-000000000002', 'call_1')).not.toBe(id);
    expect(clientCallId(run, 'q1/call_1')).not.toBe(id);
  });
});
