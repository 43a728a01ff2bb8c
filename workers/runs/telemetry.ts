import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { contextOf, TRACER_NAME } from '../../src/telemetry/propagation.js';
import type { Usage } from '../../src/shared/events.js';
import { LOCAL_MODEL, type GenerationSettings } from '../../src/shared/model-settings.js';
import type { ChatMessage, ModelResult, PlanNode, ToolCall } from '../models/types.js';
import type { Tool } from '../tools/tool.js';

/**
 * A run's spans in the worker (DESIGN §18), after the OpenTelemetry GenAI semantic conventions:
 * `invoke_agent <agent>` around an attempt (child of the request that started the run, through the
 * job's `traceparent`), `chat <model>` per model call, `execute_tool <tool>` per tool call, and
 * `retrieval` per knowledge-base search. The executor and the run context hold a RunTracer only when
 * tracing is on; without one they call straight through, building no span at all.
 *
 * Prompts, answers, tool arguments and results, and retrieval queries are recorded only with
 * OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, as the conventions' opt-in attributes
 * (`gen_ai.input.messages`, `gen_ai.output.messages`, …), each bounded in size.
 */

export interface RunTracerOptions {
  captureMessageContent: boolean;
}

/** What an `invoke_agent` span says of the run's attempt. */
export interface AgentInvocation {
  runId: string;
  conversationId: string;
  mode: string;
  attempt: number;
  agentId: string | null;
  agentName: string | null;
  model: string;
  apiFormat: GenerationSettings['apiFormat'];
}

/** How an attempt ended, as its span records it. */
export interface AttemptOutcome {
  /** succeeded, failed, cancelled, waiting (for approval), handed_back (shutdown, outage) or superseded. */
  status: string;
  /** A failure's code (`max_iterations`, `gateway_unavailable`, …): the span's `error.type`. */
  errorType?: string;
}

export interface AgentSpan {
  ended(outcome: AttemptOutcome, usage: Usage): void;
}

/** A model call as its `chat` span describes it. */
export interface ChatRequest {
  model: string;
  settings: GenerationSettings;
  conversationId: string;
  /** The messages sent (read only when content is captured). */
  messages: () => ChatMessage[];
}

/** Longest text of one message part recorded; a longer one is cut with a marker. */
const PART_CHARS = 4096;
/** Longest content attribute recorded (messages JSON, tool arguments, results). */
const CONTENT_CHARS = 32 * 1024;
const TRUNCATED = '…[truncated]';

/** `gen_ai.provider.name` of a model call: the built-in model, or the provider whose API the gateway format speaks. */
export function providerName(model: string, apiFormat: GenerationSettings['apiFormat']): string {
  if (model === LOCAL_MODEL) return 'local';
  return apiFormat === 'native' ? 'gcp.gemini' : 'openai';
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}${TRUNCATED}`;
}

/** A low-cardinality name for what went wrong: a failure's code, else the error's class. */
function errorTypeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code) return code.slice(0, 64);
  const name = (err as Error | null)?.name;
  if (typeof name === 'string' && name && name !== 'Error') return name.slice(0, 64);
  const constructor = (err as object | null)?.constructor?.name;
  return constructor && constructor !== 'Error' && constructor !== 'Object' ? constructor : '_OTHER';
}

function recordError(span: Span, err: unknown): void {
  const error = err instanceof Error ? err : new Error(String(err));
  span.recordException(error);
  span.setAttribute('error.type', errorTypeOf(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: clip(error.message, 256) });
}

type Part = Record<string, unknown>;
interface OutMessage {
  role: string;
  parts: Part[];
  finish_reason?: string;
}

const text = (content: string, max: number): Part => ({ type: 'text', content: clip(content, max) });

/** The conventions' message shape (role + typed parts) of the platform's chat messages. */
function messageOf(m: ChatMessage, max: number): OutMessage {
  switch (m.role) {
    case 'system':
      return { role: 'system', parts: [text(m.content, max)] };
    case 'user':
      return {
        role: 'user',
        parts: [text(m.content, max), ...(m.images ?? []).map((image) => ({ type: 'file', modality: 'image', mime_type: image.content_type, file_id: image.id }))],
      };
    case 'assistant':
      return { role: 'assistant', parts: [...(m.content ? [text(m.content, max)] : []), ...(m.toolCalls ?? []).map((call) => toolCallPart(call))] };
    case 'tool':
      return { role: 'tool', parts: [{ type: 'tool_call_response', id: m.toolCallId, response: clip(m.content, max) }] };
  }
}

const toolCallPart = (call: ToolCall): Part => ({ type: 'tool_call', id: call.id, name: call.name, arguments: call.arguments });

/**
 * Messages as one bounded JSON attribute: parts are cut to PART_CHARS, and while the whole is still
 * too long the oldest messages are left out (the latest turn matters most), then parts are cut shorter.
 */
export function boundedMessages(build: (partChars: number) => OutMessage[]): string {
  for (const max of [PART_CHARS, 1024, 256]) {
    const all = build(max);
    for (let from = 0; from < all.length; from++) {
      const json = JSON.stringify(all.slice(from));
      if (json.length <= CONTENT_CHARS) return json;
    }
  }
  return JSON.stringify(build(64).slice(-1));
}

/** A value (tool arguments, results) as one bounded attribute string. */
function boundedValue(value: unknown): string {
  return clip(typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null'), CONTENT_CHARS);
}

export class RunTracer {
  private readonly tracer = trace.getTracer(TRACER_NAME);

  constructor(private readonly options: RunTracerOptions) {}

  get capturesContent(): boolean {
    return this.options.captureMessageContent;
  }

  /** Runs `fn` inside a span of its own (the active context for what it calls); errors are recorded on it and rethrown. */
  private async within<T>(name: string, kind: SpanKind, attributes: Attributes, fn: (span: Span) => Promise<T>, parent: Context = context.active(), startTime?: number): Promise<T> {
    const span = this.tracer.startSpan(name, { kind, attributes, startTime }, parent);
    try {
      return await context.with(trace.setSpan(parent, span), fn, undefined, span);
    } catch (err) {
      recordError(span, err);
      throw err;
    } finally {
      span.end();
    }
  }

  /**
   * One attempt of a run: `invoke_agent <agent name or default>`, child of the request that started
   * the run (the job's `traceparent`: every attempt of the run, a resumed one too, joins that trace).
   */
  invokeAgent<T>(agent: AgentInvocation, traceparent: string | undefined, startTime: number, run: (span: AgentSpan) => Promise<T>): Promise<T> {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': agent.agentName ?? 'default',
      'gen_ai.conversation.id': agent.conversationId,
      'gen_ai.provider.name': providerName(agent.model, agent.apiFormat),
      'gen_ai.request.model': agent.model,
      'agent_platform.run.id': agent.runId,
      'agent_platform.run.mode': agent.mode,
      'agent_platform.run.attempt': agent.attempt,
    };
    if (agent.agentId) attributes['gen_ai.agent.id'] = agent.agentId;
    const name = `invoke_agent ${agent.agentName ?? 'default'}`;
    return this.within(
      name,
      SpanKind.INTERNAL,
      attributes,
      (span) =>
        run({
          ended(outcome, usage) {
            span.setAttributes({
              'agent_platform.run.outcome': outcome.status,
              'gen_ai.usage.input_tokens': usage.prompt_tokens,
              'gen_ai.usage.output_tokens': usage.completion_tokens,
            });
            if (outcome.errorType) {
              span.setAttribute('error.type', outcome.errorType);
              span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.errorType });
            }
          },
        }),
      contextOf(traceparent),
      startTime,
    );
  }

  /** One model call: `chat <model>`. */
  chat(request: ChatRequest, call: () => Promise<ModelResult>): Promise<ModelResult> {
    return this.modelCall(request, call, (result) => ({
      finishReason: result.finishReason,
      usage: result.usage,
      output: (max) => [{ role: 'assistant', parts: [...(result.text ? [text(result.text, max)] : []), ...result.toolCalls.map(toolCallPart)], finish_reason: result.finishReason }],
    }));
  }

  /** A DAG's planning call: a `chat <model>` span too (its answer is the plan). */
  plan(request: ChatRequest, call: () => Promise<{ nodes: PlanNode[]; usage: Usage }>): Promise<{ nodes: PlanNode[]; usage: Usage }> {
    return this.modelCall(request, call, (result) => ({
      finishReason: 'stop',
      usage: result.usage,
      output: (max) => [{ role: 'assistant', parts: [text(JSON.stringify(result.nodes), max)], finish_reason: 'stop' }],
    }));
  }

  private modelCall<T>(request: ChatRequest, call: () => Promise<T>, read: (result: T) => { finishReason: string; usage: Usage; output: (max: number) => OutMessage[] }): Promise<T> {
    const provider = providerName(request.model, request.settings.apiFormat);
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': request.model,
      'gen_ai.conversation.id': request.conversationId,
    };
    const { settings } = request;
    if (settings.maxTokens !== undefined) attributes['gen_ai.request.max_tokens'] = settings.maxTokens;
    const sampling = settings.sampling;
    if (sampling?.temperature !== undefined) attributes['gen_ai.request.temperature'] = sampling.temperature;
    if (sampling?.top_p !== undefined) attributes['gen_ai.request.top_p'] = sampling.top_p;
    if (sampling?.seed !== undefined) attributes['gen_ai.request.seed'] = sampling.seed;
    if (sampling?.presence_penalty !== undefined) attributes['gen_ai.request.presence_penalty'] = sampling.presence_penalty;
    if (sampling?.frequency_penalty !== undefined) attributes['gen_ai.request.frequency_penalty'] = sampling.frequency_penalty;
    if (sampling?.stop?.length) attributes['gen_ai.request.stop_sequences'] = sampling.stop;
    if (this.options.captureMessageContent) {
      const messages = request.messages();
      attributes['gen_ai.input.messages'] = boundedMessages((max) => messages.map((m) => messageOf(m, max)));
    }
    // The local model runs in this process; a gateway model is a remote call.
    const kind = provider === 'local' ? SpanKind.INTERNAL : SpanKind.CLIENT;
    return this.within(`chat ${request.model}`, kind, attributes, async (span) => {
      const result = await call();
      const { finishReason, usage, output } = read(result);
      span.setAttributes({
        'gen_ai.response.finish_reasons': [finishReason],
        'gen_ai.usage.input_tokens': usage.prompt_tokens,
        'gen_ai.usage.output_tokens': usage.completion_tokens,
      });
      if (this.options.captureMessageContent) span.setAttribute('gen_ai.output.messages', boundedMessages(output));
      return result;
    });
  }

  /** One tool call: `execute_tool <name>`; a result that is an error marks the span as failed. */
  tool(call: ToolCall, tools: Tool[], conversationId: string, run: () => Promise<{ output: unknown; isError: boolean }>): Promise<{ output: unknown; isError: boolean }> {
    const tool = tools.find((t) => t.name === call.name);
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.name,
      'gen_ai.tool.call.id': call.id,
      // A connector's tool runs on its MCP server (an extension); knowledge search reads a data store.
      'gen_ai.tool.type': tool?.mcpName !== undefined ? 'extension' : call.name === 'knowledge_base_retrieve' ? 'datastore' : 'function',
      'gen_ai.conversation.id': conversationId,
    };
    if (tool) attributes['gen_ai.tool.description'] = clip(tool.description, 512);
    if (this.options.captureMessageContent) attributes['gen_ai.tool.call.arguments'] = boundedValue(call.arguments);
    return this.within(`execute_tool ${call.name}`, SpanKind.INTERNAL, attributes, async (span) => {
      const result = await run();
      if (this.options.captureMessageContent) span.setAttribute('gen_ai.tool.call.result', boundedValue(result.output));
      if (result.isError) {
        span.setAttribute('error.type', 'tool_error');
        span.setStatus({ code: SpanStatusCode.ERROR, message: clip(typeof result.output === 'string' ? result.output : 'tool error', 256) });
      }
      return result;
    });
  }

  /** One knowledge-base search (`retrieval`): how many knowledge bases, the top_k asked, the passages found. */
  retrieval<T>(knowledgeBaseIds: string[], query: string, topK: number, run: () => Promise<T[]>): Promise<T[]> {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'retrieval',
      'gen_ai.request.top_k': topK,
      'agent_platform.knowledge_base.count': knowledgeBaseIds.length,
    };
    if (knowledgeBaseIds.length > 0) attributes['gen_ai.data_source.id'] = knowledgeBaseIds.join(',');
    if (this.options.captureMessageContent) attributes['gen_ai.retrieval.query.text'] = clip(query, PART_CHARS);
    const name = knowledgeBaseIds.length === 1 ? `retrieval ${knowledgeBaseIds[0]}` : 'retrieval';
    return this.within(name, SpanKind.CLIENT, attributes, async (span) => {
      const hits = await run();
      span.setAttribute('agent_platform.retrieval.hits', hits.length);
      return hits;
    });
  }

  /** A DAG node's work (its model and tool calls are its children). */
  node<T>(nodeId: string, run: () => Promise<T>): Promise<T> {
    return this.within(`dag_node ${nodeId}`, SpanKind.INTERNAL, { 'agent_platform.dag.node.id': nodeId }, () => run());
  }
}
