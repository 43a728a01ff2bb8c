import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { chatClientTools, responseClientTools } from '../src/openai/client-tools.js';
import { chatToolOutputs, responseToolOutputs } from '../src/openai/client-tool-messages.js';
import { ChatCompletionRequest, ResponseRequest, chatCompletionTurn, responseTurn } from '../src/openai/requests.js';
import { BadRequestError } from '../src/shared/errors.js';

/** The /v1 spellings of client tools (DESIGN §23) as the engine's ClientTools, and tool calls in histories. */

const weather = { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true } };

function refusal(fn: () => unknown): BadRequestError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestError);
    return err as BadRequestError;
  }
  throw new Error('expected a 400');
}

describe('chat tools', () => {
  it('takes function tools as ClientTools (strict dropped) and offers none for tool_choice "none"', () => {
    expect(chatClientTools({ tools: [weather], tool_choice: 'auto' })).toEqual([{ name: 'get_weather', description: 'Weather of a city', parameters: weather.function.parameters }]);
    expect(chatClientTools({ tools: [weather], tool_choice: 'none' })).toEqual([]);
    expect(chatClientTools({})).toEqual([]);
  });

  it('answers 400 naming the place for what the engine would not take', () => {
    expect(refusal(() => chatClientTools({ tools: weather })).param).toBe('tools');
    expect(refusal(() => chatClientTools({ tools: Array.from({ length: 65 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } })) })).message).toMatch(/64/);
    expect(refusal(() => chatClientTools({ tools: [{ type: 'function', function: { name: 'bad name!' } }] })).param).toBe('tools[0].function.name');
    expect(refusal(() => chatClientTools({ tools: [{ type: 'function', function: { name: 'f', parameters: [] } }] })).param).toBe('tools[0].function.parameters');
    expect(refusal(() => chatClientTools({ tools: [{ type: 'retrieval' }] })).param).toBe('tools[0]');
    expect(refusal(() => chatClientTools({ tools: [weather, weather] })).message).toMatch(/unique/);
  });

  it('refuses tool_choice it cannot keep, and a named function that is not a tool', () => {
    expect(refusal(() => chatClientTools({ tools: [weather], tool_choice: 'required' })).code).toBe('unsupported_parameter');
    const unknown = refusal(() => chatClientTools({ tools: [weather], tool_choice: { type: 'function', function: { name: 'nope' } } }));
    expect(unknown).toMatchObject({ code: 'invalid_request', param: 'tool_choice' });
    expect(refusal(() => chatClientTools({ tools: [weather], tool_choice: { type: 'function', function: { name: 'get_weather' } } })).code).toBe('unsupported_parameter');
    expect(refusal(() => chatClientTools({ functions: [weather.function] })).param).toBe('functions');
  });
});

describe('responses tools', () => {
  it('takes function tools and refuses hosted ones', () => {
    expect(responseClientTools({ tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false }] })).toEqual([{ name: 'get_weather', parameters: { type: 'object' } }]);
    expect(refusal(() => responseClientTools({ tools: [{ type: 'web_search' }] })).code).toBe('unsupported_parameter');
    expect(refusal(() => responseClientTools({ tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function', name: 'g' } })).param).toBe('tool_choice');
  });
});

const chatBody = (messages: unknown[]) => v.parse(ChatCompletionRequest, { model: 'agent:default', messages });
const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };

describe('tool calls in a chat history', () => {
  it('finds the results that answer the last assistant message, and none when the history ends otherwise', () => {
    const messages = [{ role: 'user', content: 'weather in Paris?' }, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_1', content: 'sunny' }];
    expect(chatToolOutputs(chatBody(messages).messages)).toEqual([{ call_id: 'call_1', output: 'sunny' }]);
    expect(chatToolOutputs(chatBody(messages.slice(0, 1)).messages)).toBeNull();
    expect(chatToolOutputs(chatBody([messages[0], messages[2]]).messages)).toBeNull();
  });

  it('renders calls and results into a new run: the trailing results are its question', () => {
    const turn = chatCompletionTurn(chatBody([{ role: 'user', content: 'weather in Paris?' }, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_1', content: 'sunny' }]));
    expect(turn.history).toEqual([
      { role: 'user', content: 'weather in Paris?' },
      { role: 'assistant', content: '[called get_weather({"city":"Paris"})]' },
    ]);
    expect(turn.question).toBe('[result of get_weather]: sunny');
  });

  it('refuses a tool message without its call id and the legacy function role', () => {
    expect(refusal(() => chatCompletionTurn(chatBody([{ role: 'tool', content: 'x' }, { role: 'user', content: 'hi' }]))).param).toBe('messages[0].tool_call_id');
    expect(refusal(() => chatCompletionTurn(chatBody([{ role: 'function', name: 'f', content: 'x' }, { role: 'user', content: 'hi' }]))).param).toBe('messages[0].role');
    expect(refusal(() => chatCompletionTurn(chatBody([{ role: 'tool', tool_call_id: 'call_9', content: 'x' }, { role: 'user', content: 'hi' }]))).param).toBe('messages[0].tool_call_id');
  });
});

describe('function calls in a Responses input', () => {
  const input = [{ type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' }, { type: 'function_call_output', call_id: 'call_1', output: 'sunny' }];
  const body = (extra: object) => v.parse(ResponseRequest, { model: 'agent:default', input, ...extra });

  it('answers the previous response with its function_call_output items', () => {
    const previous = '00000000-0000-4000-8000-000000000001';
    expect(responseToolOutputs(body({ previous_response_id: previous }).input, previous)).toEqual([{ call_id: 'call_1', output: 'sunny' }]);
    expect(responseToolOutputs(body({}).input, null)).toBeNull();
    const mixed = v.parse(ResponseRequest, { model: 'm', input: [...input, { role: 'user', content: 'and?' }] });
    expect(refusal(() => responseToolOutputs(mixed.input, previous)).param).toBe('input[2]');
  });

  it('without a previous response, is a new run whose question is the output', () => {
    const turn = responseTurn(body({}));
    expect(turn.history).toEqual([{ role: 'assistant', content: '[called get_weather({})]' }]);
    expect(turn.question).toBe('[result of get_weather]: sunny');
    expect(refusal(() => responseTurn(v.parse(ResponseRequest, { model: 'm', input: [input[1]] }))).param).toBe('input[0]');
  });
});
