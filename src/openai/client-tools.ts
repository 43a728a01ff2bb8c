import * as v from 'valibot';
import { clientToolsSchema, type ClientTool, type ClientToolCall, type ToolOutput } from '../shared/client-tools.js';
import { BadRequestError } from '../shared/errors.js';

/**
 * Client tools on the OpenAI-compatible endpoints (DESIGN §23): the functions a client sends in
 * OpenAI's two spellings, as the engine's `ClientTool`s, and the tool calls of a parked run in
 * OpenAI's shapes. `tool_choice` "required" and a named function are refused: the engine offers
 * client tools beside the agent's and lets the model choose, so forcing one is not a promise it keeps.
 */

const unsupported = (param: string, message: string) => new BadRequestError('unsupported_parameter', message, param);
const invalid = (param: string, message: string) => new BadRequestError('invalid_request', message, param);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A function as the engine takes it: OpenAI's `strict` has no meaning here (arguments are passed as the model wrote them). */
function clientToolOf(fn: Record<string, unknown>): Record<string, unknown> {
  const { name, description, parameters } = fn;
  return { name, ...(description != null ? { description } : {}), ...(parameters !== undefined ? { parameters } : {}) };
}

/** The engine's schema and bounds (≤ 64, names, parameters an object ≤ 16 KB), answered as a 400 naming the place. */
function validTools(functions: Record<string, unknown>[], param: string, at: (index: number) => string): ClientTool[] {
  const parsed = v.safeParse(clientToolsSchema, functions.map(clientToolOf));
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  const index = issue.path?.[0]?.key;
  const where = typeof index === 'number' ? `${at(index)}${issue.path?.[1] ? `.${String(issue.path[1].key)}` : ''}` : param;
  throw invalid(where, `${where}: ${issue.message}`);
}

function toolList(tools: unknown, param: string): unknown[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw invalid(param, `${param} must be an array of tools`);
  return tools;
}

/** What `tool_choice` allows: "auto" (the default) and "none" (the client's functions are not offered). */
function offered(choice: unknown, param: string, names: string[]): boolean {
  if (choice === undefined || choice === null || choice === 'auto') return true;
  if (choice === 'none') return false;
  if (choice === 'required') throw unsupported(param, `${param} "required" is not supported: the agent decides whether to call a function ("auto" or "none")`);
  const named = isObject(choice) && isObject(choice.function) ? choice.function.name : isObject(choice) ? choice.name : undefined;
  if (typeof named === 'string') {
    if (!names.includes(named)) throw invalid(param, `${param} names "${named}", which is not one of the tools`);
    throw unsupported(param, `${param} naming a function is not supported: the agent decides whether to call a function ("auto" or "none")`);
  }
  throw invalid(param, `${param} must be "auto", "none", "required" or a function`);
}

/** /v1/chat/completions `tools` (type function) and `tool_choice`; the legacy `functions` are refused with the way forward. */
export function chatClientTools(body: { tools?: unknown; tool_choice?: unknown; functions?: unknown; function_call?: unknown }): ClientTool[] {
  if (body.functions != null) throw unsupported('functions', 'functions (deprecated by OpenAI) is not supported: send the same functions as tools: [{type: "function", function: {...}}]');
  if (body.function_call != null) throw unsupported('function_call', 'function_call (deprecated by OpenAI) is not supported: use tool_choice');
  const functions = toolList(body.tools, 'tools').map((tool, index) => {
    if (!isObject(tool) || tool.type !== 'function' || !isObject(tool.function)) throw invalid(`tools[${index}]`, `tools[${index}] must be {type: "function", function: {name, description?, parameters?}}`);
    return tool.function;
  });
  const tools = validTools(functions, 'tools', (index) => `tools[${index}].function`);
  return offered(body.tool_choice, 'tool_choice', tools.map((t) => t.name)) ? tools : [];
}

/** /v1/responses function tools ({type: "function", name, …}); the hosted tools (web search, files…) are not. */
export function responseClientTools(body: { tools?: unknown; tool_choice?: unknown }): ClientTool[] {
  const functions = toolList(body.tools, 'tools').map((tool, index) => {
    if (!isObject(tool)) throw invalid(`tools[${index}]`, `tools[${index}] must be a function tool {type: "function", name, parameters?}`);
    if (tool.type !== 'function') throw unsupported(`tools[${index}]`, `tools of type "${String(tool.type)}" are not supported: the agent runs its own tools; send function tools`);
    return tool;
  });
  const tools = validTools(functions, 'tools', (index) => `tools[${index}]`);
  return offered(body.tool_choice, 'tool_choice', tools.map((t) => t.name)) ? tools : [];
}

/** The outputs a request answers a parked run's calls with: each call id once. */
export function uniqueOutputs(outputs: ToolOutput[], param: string): ToolOutput[] {
  if (new Set(outputs.map((o) => o.call_id)).size !== outputs.length) throw invalid(param, 'each tool call is answered once');
  return outputs;
}

/** A call's arguments as OpenAI sends them: a JSON text. */
export const argumentsText = (call: ClientToolCall) => JSON.stringify(call.arguments);

/** A parked run's calls as a chat message's `tool_calls`. */
export const chatToolCalls = (calls: ClientToolCall[]) => calls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: argumentsText(call) } }));

/** A parked run's call as a Responses output item. */
export const functionCallItem = (call: ClientToolCall, status: 'in_progress' | 'completed') => ({
  type: 'function_call' as const,
  id: `fc_${call.id}`,
  call_id: call.id,
  name: call.name,
  arguments: status === 'completed' ? argumentsText(call) : '',
  status,
});

/** How a call and its result read in a history that resumes no parked run (a new run over what the client sent). */
export const renderedCall = (name: string, args: string) => `[called ${name}(${args})]`;
export const renderedResult = (name: string, output: string) => `[result of ${name}]: ${output}`;

/** A parking's calls as the assistant message of a chat completion (`finish_reason: "tool_calls"`). */
export const chatToolCallMessage = (parked: { toolCalls: ClientToolCall[]; text: string }) => ({
  role: 'assistant' as const,
  content: parked.text || null,
  refusal: null,
  tool_calls: chatToolCalls(parked.toolCalls),
});

/** A parking's calls as streamed chat deltas, as OpenAI streams them: each call opened (id, name), then its arguments. */
export const chatToolCallDeltas = (calls: ClientToolCall[]) =>
  calls.flatMap((call, index) => [
    { tool_calls: [{ index, id: call.id, type: 'function' as const, function: { name: call.name, arguments: '' } }] },
    { tool_calls: [{ index, function: { arguments: argumentsText(call) } }] },
  ]);
