import { setTimeout as sleep } from 'node:timers/promises';
import { findExpression } from '../tools/calculator.js';
import { fillSchema, lastNumberIn } from './schema-filler.js';
import type { Tool } from '../tools/tool.js';
import { DEFAULT_DAG_MAX_NODES, limitTasks } from './plan-limit.js';
import { findToolMentions, spokenToolNames, withoutMentions } from './tool-mentions.js';
import type { Usage } from '../../src/shared/events.js';
import { describeImage, type Attachment } from '../../src/shared/attachments.js';
import { NODE_OUTPUT, SYNTHESIS_NODE, type ChatMessage, type ModelProvider, type ModelRequest, type ModelResult, type ModelSink, type PlanNode, type PlanRequest, type SummaryRequest, type ToolCall, currentTurn } from './types.js';
import { extractiveSummary } from '../../src/shared/context-window.js';
import { RECALL_TOOL, REMEMBER_TOOL } from '../tools/memory-tools.js';
import { bestMemory, nextRemember, quoteMemory, recalledIn, recalledMemories } from './local-memory.js';
import type { OutputFormat } from '../../src/shared/output-schema.js';

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

function usageOf(messages: ChatMessage[], output: string): Usage {
  const prompt = messages.reduce((sum, m) => sum + words(m.content), 0);
  const completion = words(output);
  return { prompt_tokens: prompt, completion_tokens: completion, reasoning_tokens: 0, total_tokens: prompt + completion };
}

const quote = (text: string) => `"${text.replace(/\s+/g, ' ').trim()}"`;

/** DESIGN §6: the answer quotes the best chunk the knowledge bases returned. */
function quoteBestChunk(toolOutput: string): string {
  let best: { content?: unknown; document_name?: unknown } | undefined;
  try {
    best = (JSON.parse(toolOutput) as { content?: unknown; document_name?: unknown }[])[0];
  } catch {
    return `The knowledge base search failed: ${toolOutput}.`;
  }
  if (!best || typeof best.content !== 'string') return 'The knowledge bases have nothing on that.';
  return `According to ${quote(String(best.document_name))}: ${quote(best.content)}.`;
}

/** DESIGN §15: `I see 1 image: cat.png (PNG, 640×480).` */
const acknowledgeImages = (images: Attachment[]) => `I see ${images.length} image${images.length === 1 ? '' : 's'}: ${images.map(describeImage).join(', ')}.`;

/**
 * DESIGN §23: with an output format, the answer is the schema filled from the prose answer (its
 * text, the last number it states); `json_object` is `{"answer": text}`.
 */
function structuredAnswer(text: string, format: OutputFormat | undefined): string {
  if (!format) return text;
  if (format.type === 'json_object') return JSON.stringify({ answer: text });
  return JSON.stringify(fillSchema(format.schema, { text, number: lastNumberIn(text) }));
}

/** Call ids of connector tool calls (the calculator's are call_<n>). */
const CONNECTOR_CALL = 'call_mcp_';
/** Call ids of client function calls (DESIGN §23). */
const CLIENT_CALL = 'call_client_';

const NAME_CHAR = /[A-Za-z0-9_-]/;

/** Whether `name` appears in `text` as a word of its own (not inside a longer name). */
function mentions(text: string, name: string): boolean {
  for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) {
    if (!NAME_CHAR.test(text[at - 1] ?? ' ') && !NAME_CHAR.test(text[at + name.length] ?? ' ')) return true;
  }
  return false;
}

const lastWord = (text: string) => text.match(/[\p{L}\p{N}_-]+/gu)?.at(-1) ?? '';

/**
 * DESIGN §23: the first client function the question names that was not called yet in this turn,
 * its arguments filled from the schema (strings ← the question's last word, numbers ← its last number).
 */
function nextClientCall(turn: ChatMessage[], tools: Tool[]): ToolCall | undefined {
  const clientTools = tools.filter((t) => t.client);
  const question = turn.find((m) => m.role === 'user' && !m.injected)?.content;
  if (clientTools.length === 0 || !question) return undefined;
  const made = turn.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : [])).filter((c) => c.id.startsWith(CLIENT_CALL));
  const called = new Set(made.map((c) => c.name));
  const tool = clientTools.find((t) => !called.has(t.name) && mentions(question, t.name));
  if (!tool) return undefined;
  const args = fillSchema(tool.parameters, { text: lastWord(question), number: lastNumberIn(question) });
  return { id: `${CLIENT_CALL}${made.length + 1}`, name: tool.name, arguments: isObject(args) ? args : {} };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The built-in offline model (DESIGN §6): deterministic, streams its answer word by word.
 * A connector tool named in the user's text with a JSON object → a call of that tool, whose output it quotes (§8);
 * arithmetic in the user's text → a calculator call, whose result it states; every injected
 * message is acknowledged by quoting it; node outputs are combined in a DAG synthesis; the
 * question's images are acknowledged by name, type and size (the synthesis leaves that to its nodes).
 */
export class LocalModel implements ModelProvider {
  readonly deterministic = true;

  constructor(
    private readonly tokenDelayMs: number,
    private readonly maxPlanNodes = DEFAULT_DAG_MAX_NODES,
  ) {}

  async complete(request: ModelRequest, sink: ModelSink): Promise<ModelResult> {
    const turn = currentTurn(request.messages);
    const names = spokenToolNames(request.tools);
    const connectorCall = this.nextConnectorCall(turn, names);
    if (connectorCall) {
      const thought = `The message asks for the ${connectorCall.name} tool with these arguments; I will call it.`;
      await sink.thought(thought);
      return { text: '', toolCalls: [connectorCall], finishReason: 'stop', usage: usageOf(request.messages, thought) };
    }
    const clientCall = nextClientCall(turn, request.tools);
    if (clientCall) {
      const thought = `The question names the client function ${clientCall.name}; I will ask the client to call it.`;
      await sink.thought(thought);
      return { text: '', toolCalls: [clientCall], finishReason: 'stop', usage: usageOf(request.messages, thought) };
    }
    const remember = nextRemember(turn, request.tools);
    if (remember) {
      await sink.thought('The message asks me to remember something; I will save it to memory.');
      return { text: '', toolCalls: [remember], finishReason: 'stop', usage: usageOf(request.messages, '') };
    }
    const call = this.nextCalculation(turn, request, names);
    if (call) {
      const thought = `The message contains the arithmetic expression ${call.expression}; I will use the calculator.`;
      await sink.thought(thought);
      const toolCall = { id: `call_${call.index}`, name: 'calculator', arguments: { expression: call.expression } };
      return { text: '', toolCalls: [toolCall], finishReason: 'stop', usage: usageOf(request.messages, thought) };
    }
    const search = this.nextRetrieval(turn, request);
    if (search) {
      const thought = 'This agent has knowledge bases; I will search them for the question.';
      await sink.thought(thought);
      const toolCall = { id: 'call_kb', name: 'knowledge_base_retrieve', arguments: { query: search } };
      return { text: '', toolCalls: [toolCall], finishReason: 'stop', usage: usageOf(request.messages, thought) };
    }
    await sink.thought('I have what I need to answer.');
    const answer = structuredAnswer(this.answer(turn, [...names.values()][0], new Set(request.tools.filter((t) => t.client).map((t) => t.name)), recalledMemories(request.messages)), request.settings.outputFormat);
    await this.stream(answer, sink, request.signal);
    return { text: answer, toolCalls: [], finishReason: 'stop', usage: usageOf(request.messages, answer) };
  }

  async plan({ query }: PlanRequest): Promise<{ nodes: PlanNode[]; usage: Usage }> {
    const parts = query
      .split(/\s+and\s+|;|\?/i)
      .map((part) => part.trim())
      .filter(Boolean);
    const questions = parts.length ? parts : [query.trim()];
    const nodes = limitTasks(questions.map((task, i) => ({ id: `q${i + 1}`, task, depends_on: [] as string[] })), this.maxPlanNodes);
    const synthesis = { id: SYNTHESIS_NODE, task: `Combine the answers to: ${query.trim()}`, depends_on: nodes.map((n) => n.id) };
    return { nodes: [...nodes, synthesis], usage: usageOf([{ role: 'user', content: query }], '') };
  }

  /**
   * DESIGN §20: deterministic, the summary so far then the first sentence of each message,
   * shortened; at most max_tokens words (its oldest lines go first). The platform cuts it to real tokens.
   */
  async summarize({ previous, messages, settings }: SummaryRequest): Promise<{ text: string; usage: Usage }> {
    let lines = extractiveSummary(previous, messages).split('\n');
    const limit = settings.maxTokens ?? Infinity;
    let size = lines.reduce((sum, line) => sum + words(line), 0);
    while (lines.length > 1 && size > limit) size -= words(lines.shift()!);
    lines = lines.filter(Boolean);
    const text = lines.join('\n');
    const input: ChatMessage[] = [...(previous ? [{ role: 'system' as const, content: previous }] : []), ...messages];
    return { text, usage: usageOf(input, text) };
  }

  /** The first connector tool call the turn's user messages ask for that was not made yet in this turn. */
  private nextConnectorCall(turn: ChatMessage[], names: Map<string, string>): ToolCall | undefined {
    if (names.size === 0) return undefined;
    const made = turn.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : [])).filter((c) => c.id.startsWith(CONNECTOR_CALL));
    const key = (name: string, args: Record<string, unknown>) => `${name}\u0000${JSON.stringify(args)}`;
    const done = new Set(made.map((c) => key(c.name, c.arguments)));
    for (const message of turn) {
      if (message.role !== 'user') continue;
      const next = findToolMentions(message.content, names).find((m) => !done.has(key(m.tool, m.args)));
      if (next) return { id: `${CONNECTOR_CALL}${made.length + 1}`, name: next.tool, arguments: next.args };
    }
    return undefined;
  }

  /** The first expression in the turn's user messages (outside connector tool arguments) that has no calculator result yet. */
  private nextCalculation(turn: ChatMessage[], request: ModelRequest, names: Map<string, string>) {
    if (!request.tools.some((t) => t.name === 'calculator')) return undefined;
    const done = new Set(turn.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => String(c.arguments.expression)) : [])));
    const users = turn.filter((m) => m.role === 'user');
    for (const [index, message] of users.entries()) {
      const text = names.size > 0 ? withoutMentions(message.content, findToolMentions(message.content, names)) : message.content;
      const expression = findExpression(text);
      if (expression && !done.has(expression)) return { expression, index: index + done.size + 1 };
    }
    return undefined;
  }

  /** The question, if the agent can search knowledge bases and has not yet in this turn. */
  private nextRetrieval(turn: ChatMessage[], request: ModelRequest): string | undefined {
    if (!request.tools.some((t) => t.name === 'knowledge_base_retrieve')) return undefined;
    if (turn.some((m) => m.role === 'tool' && m.name === 'knowledge_base_retrieve')) return undefined;
    return turn.find((m) => m.role === 'user' && !m.injected)?.content;
  }

  /** `exampleTool`: a connector tool of the agent, named in the help text when there is nothing else to say. */
  private answer(turn: ChatMessage[], exampleTool?: string, clientTools: ReadonlySet<string> = new Set(), memories: string[] = []): string {
    const calls = new Map(turn.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : [])).map((c) => [c.id, c]));
    const parts: string[] = [];
    for (const m of turn) {
      if (m.role !== 'tool') continue;
      if (m.name === NODE_OUTPUT) parts.push(m.content);
      else if (m.name === 'calculator' && m.isError) parts.push(`I could not work out ${calls.get(m.toolCallId)?.arguments.expression}: ${quote(m.content)}.`);
      else if (m.name === 'calculator') parts.push(`The result of ${calls.get(m.toolCallId)?.arguments.expression} is ${m.content}.`);
      else if (m.name === 'knowledge_base_retrieve') parts.push(quoteBestChunk(m.content));
      else if (m.name === REMEMBER_TOOL && !m.isError) parts.push(`I will remember that: ${quote(String(calls.get(m.toolCallId)?.arguments.content ?? ''))}.`);
      else if (m.name === RECALL_TOOL && !m.isError) parts.push(quoteMemory(bestMemory(turn, recalledIn(m.content))));
      else if (m.name && clientTools.has(m.name)) parts.push(`The ${m.name} function returned ${quote(m.content)}.`);
      else parts.push(m.isError ? `The ${m.name} tool failed: ${quote(m.content)}.` : `The ${m.name} tool returned ${quote(m.content)}.`);
    }
    const question = turn.find((m) => m.role === 'user' && !m.injected);
    const remembered = parts.length === 0 ? bestMemory(turn, memories) : undefined;
    if (remembered) parts.push(quoteMemory(remembered));
    if (parts.length === 0) {
      parts.push(`You asked ${quote(question?.content ?? '')}. I am the built-in local model: I can work out arithmetic and quote your knowledge bases.`);
      if (exampleTool) parts.push(`To call a connector tool, name it followed by its arguments as a JSON object, as in ${exampleTool} {}.`);
    }
    const images = question?.role === 'user' ? (question.images ?? []) : [];
    const synthesis = turn.some((m) => m.role === 'tool' && m.name === NODE_OUTPUT);
    if (images.length > 0 && !synthesis) parts.unshift(acknowledgeImages(images));
    for (const m of turn) if (m.role === 'user' && m.injected) parts.push(`You also said ${quote(m.content)}.`);
    return parts.join(' ');
  }

  private async stream(text: string, sink: ModelSink, signal: AbortSignal) {
    const pieces = text.split(/(?<=\s)/);
    for (const piece of pieces) {
      signal.throwIfAborted();
      if (this.tokenDelayMs > 0) await sleep(this.tokenDelayMs, undefined, { signal });
      await sink.token(piece);
    }
  }
}
