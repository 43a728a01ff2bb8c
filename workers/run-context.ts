import type { Run } from '../src/db/models.js';
import { emptyUsage, type EventData, type EventType, type Usage } from '../src/shared/events.js';
import type { EventPublisher } from '../src/shared/publisher.js';
import { ACTIVE_MARKER_TTL_SECONDS, type InjectPayload, type RedisKeys, type ScriptedRedis } from '../src/shared/redis-keys.js';
import { runTool, type Tool } from './tools/registry.js';
import type { ChatMessage, ModelProvider, ModelResult, ModelSink, ToolCall } from './models/types.js';

export interface AgentSettings {
  model: string;
  instructions: string;
  maxIterations: number;
}

export interface RunDeps {
  redis: ScriptedRedis;
  keys: RedisKeys;
  publisher: EventPublisher;
  now: () => Date;
}

/** What a loop (ReAct or DAG) needs from the run it executes: events, injects, tools, usage. */
export class RunContext {
  readonly usage: Usage = emptyUsage();

  constructor(
    readonly run: Run,
    readonly agent: AgentSettings,
    readonly model: ModelProvider,
    readonly tools: Tool[],
    readonly signal: AbortSignal,
    private readonly deps: RunDeps,
  ) {}

  publish<T extends EventType>(type: T, data: EventData<T>): Promise<string> {
    return this.deps.publisher.publish(this.run.id, type, data);
  }

  sink(iteration: number, silent = false): ModelSink {
    if (silent) return { token: async () => {}, thought: async () => {} };
    return {
      token: (text) => this.publish('token', { iteration, text }),
      thought: (text) => this.publish('thought', { iteration, text }),
    };
  }

  async complete(messages: ChatMessage[], iteration: number, options: { tools?: Tool[]; silent?: boolean } = {}): Promise<ModelResult> {
    const result = await this.model.complete(
      { model: this.agent.model, messages, tools: options.tools ?? this.tools, signal: this.signal },
      this.sink(iteration, options.silent),
    );
    for (const key of Object.keys(this.usage) as (keyof Usage)[]) this.usage[key] += result.usage[key];
    return result;
  }

  /** A breakpoint: keep the conversation marked active, absorb every waiting inject. */
  async breakpoint(iteration: number): Promise<ChatMessage[]> {
    const { redis, keys } = this.deps;
    await redis.refreshActive(keys.conversationActive(this.run.conversation_id), this.run.id, ACTIVE_MARKER_TTL_SECONDS);
    return this.absorbInjects(iteration);
  }

  async absorbInjects(iteration: number): Promise<ChatMessage[]> {
    const raw = await this.deps.redis.drainInjects(this.deps.keys.conversationInjects(this.run.conversation_id));
    const absorbed: ChatMessage[] = [];
    for (const item of raw) {
      const payload = JSON.parse(item) as InjectPayload;
      await this.publish('injected', { message_id: payload.message_id, content: payload.content, iteration });
      absorbed.push({ role: 'user', content: payload.content, injected: true });
    }
    return absorbed;
  }

  /** Releases the conversation unless an inject is waiting (one Lua step); true when finished. */
  async tryFinish(): Promise<boolean> {
    const { redis, keys } = this.deps;
    const finished = await redis.finishIfNoInjects(keys.conversationInjects(this.run.conversation_id), keys.conversationActive(this.run.conversation_id), this.run.id);
    return finished === 1;
  }

  /** Runs the calls in order, publishing each call and result; returns the tool messages. */
  async callTools(iteration: number, calls: ToolCall[]): Promise<ChatMessage[]> {
    const results: ChatMessage[] = [];
    for (const call of calls) {
      await this.publish('tool_call', { iteration, call_id: call.id, name: call.name, arguments: call.arguments });
      const { output, isError } = await runTool(this.tools, call.name, call.arguments, { signal: this.signal, now: this.deps.now });
      await this.publish('tool_result', { iteration, call_id: call.id, name: call.name, output, is_error: isError });
      results.push({ role: 'tool', content: typeof output === 'string' ? output : JSON.stringify(output), toolCallId: call.id, name: call.name });
    }
    return results;
  }
}

export class RunFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
  }
}

export interface LoopOutcome {
  answer: string;
  finishReason: ModelResult['finishReason'];
}
