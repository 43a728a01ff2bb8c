import type { Run } from '../src/db/models.js';
import type { Logger } from '../src/logger.js';
import type { RetrievedChunk } from '../src/knowledge/retrieval.js';
import { emptyUsage, type EventData, type EventType, type Usage } from '../src/shared/events.js';
import type { EventPublisher } from '../src/shared/publisher.js';
import { ACTIVE_MARKER_TTL_SECONDS, type InjectPayload, type RedisKeys, type ScriptedRedis } from '../src/shared/redis-keys.js';
import { runTool, type Tool } from './tools/registry.js';
import type { ChatMessage, ModelProvider, ModelResult, ModelSink, PlanNode, ToolCall } from './models/types.js';
import type { GenerationSettings } from '../src/shared/model-settings.js';
import type { Checkpoint, CheckpointWriter, LoopState } from './checkpoint.js';
import { HandBack, RunCancelled, RunFailure, type RunControl } from './run-control.js';

export interface AgentSettings {
  model: string;
  settings: GenerationSettings;
  instructions: string;
  maxIterations: number;
  knowledgeBaseIds: string[];
}

export interface RunDeps {
  redis: ScriptedRedis;
  keys: RedisKeys;
  publisher: EventPublisher;
  logger: Logger;
  now: () => Date;
  searchKnowledge: (knowledgeBaseIds: string[], query: string, topK: number) => Promise<RetrievedChunk[]>;
}

/** The event scope of everything that happens in order; DAG nodes running side by side get their own. */
export const MAIN_SCOPE = 'run';
/** The last events of a run (answer or error, then done) are numbered in their own scope, so they are published once even if a worker dies between writing the final row and publishing them. */
export const END_SCOPE = 'end';
/** Events allowed in flight before the loop waits for them. */
const MAX_INFLIGHT = 64;
export const nodeScope = (nodeId: string) => `node:${nodeId}`;

/**
 * What a loop (ReAct or DAG) needs from the run it executes: events, injects, tools, usage and
 * checkpoints. Events are numbered per scope, so a loop resumed from a checkpoint that makes an
 * event again (the unfinished iteration) publishes nothing twice.
 */
export class RunContext {
  readonly usage: Usage;
  private readonly seqs: Record<string, number>;
  private readonly absorbed: Set<string>;
  private readonly inflight: Promise<unknown>[] = [];
  /** The Redis keys this run's breakpoints and end touch. */
  private readonly k: { active: string; injects: string; cancel: string; userRuns: string };

  constructor(
    readonly run: Run,
    readonly agent: AgentSettings,
    readonly model: ModelProvider,
    readonly tools: Tool[],
    readonly control: RunControl,
    private readonly checkpoints: CheckpointWriter,
    private readonly deps: RunDeps,
    resumeFrom?: Checkpoint,
  ) {
    this.usage = { ...(resumeFrom?.usage ?? emptyUsage()) };
    this.seqs = { ...(resumeFrom?.seqs ?? {}) };
    this.absorbed = new Set(resumeFrom?.absorbed ?? []);
    const { keys } = deps;
    this.k = {
      active: keys.conversationActive(run.conversation_id),
      injects: keys.conversationInjects(run.conversation_id),
      cancel: keys.runCancel(run.id),
      userRuns: keys.userActiveRuns(run.user_id),
    };
  }

  get signal(): AbortSignal {
    return this.control.signal;
  }

  private get owner(): string {
    return String(this.run.attempt);
  }

  /**
   * Events are pipelined: the loop goes on while they travel (one connection keeps them in order,
   * and each is numbered when it is sent). What must follow them — a checkpoint, the end decision,
   * the end — waits for them with `flush`, which also surfaces a failed send.
   */
  publish<T extends EventType>(type: T, data: EventData<T>, scope = MAIN_SCOPE): Promise<void> {
    const key = this.scopeKey(scope);
    const seq = (this.seqs[key] ?? 0) + 1;
    this.seqs[key] = seq;
    return this.track(this.deps.publisher.publish(this.run.id, type, data, { scope: key, seq, owner: this.owner }));
  }

  /**
   * A deterministic model remakes the interrupted step's events exactly, so a resumed attempt
   * numbers them as before and the ones already sent are dropped. A gateway model makes the step
   * anew: matching by number would splice two different answers, so a resumed attempt numbers its
   * events afresh (after `status: resumed`, the interrupted step starts over for the client).
   */
  private scopeKey(scope: string): string {
    return this.model.deterministic || this.run.attempt <= 1 || scope === END_SCOPE ? scope : `${scope}@${this.run.attempt}`;
  }

  /** An event outside the numbering (`status: resumed`): always appended. */
  announce<T extends EventType>(type: T, data: EventData<T>): Promise<void> {
    return this.track(this.deps.publisher.publish(this.run.id, type, data, { owner: this.owner }));
  }

  private track(sent: Promise<unknown>): Promise<void> {
    sent.catch(() => {}); // handled where it is awaited (flush); this only keeps Node from calling it unhandled
    this.inflight.push(sent);
    return this.inflight.length >= MAX_INFLIGHT ? this.flush() : Promise.resolve();
  }

  async flush(): Promise<void> {
    while (this.inflight.length > 0) await Promise.all(this.inflight.splice(0));
  }


  /** Where a scope's numbering stands; a node that re-runs from its start counts from 0 again. */
  setScope(scope: string, seq: number): void {
    this.seqs[this.scopeKey(scope)] = seq;
  }

  sink(iteration: number, options: { silent?: boolean; scope?: string } = {}): ModelSink {
    const thought = (text: string) => this.publish('thought', { iteration, text }, options.scope);
    if (options.silent) return { token: async () => {}, thought: async () => {}, notice: thought };
    return { token: (text) => this.publish('token', { iteration, text }, options.scope), thought, notice: thought };
  }

  async complete(messages: ChatMessage[], iteration: number, options: { tools?: Tool[]; silent?: boolean; scope?: string } = {}): Promise<ModelResult> {
    const { model, settings } = this.agent;
    const result = await this.model.complete({ model, settings, messages, tools: options.tools ?? this.tools, signal: this.signal }, this.sink(iteration, options));
    this.addUsage(result.usage);
    return requireVisible(result, model, settings.maxTokens);
  }

  async plan(): Promise<PlanNode[]> {
    const { model, settings } = this.agent;
    const { nodes, usage } = await this.model.plan({ model, settings, query: this.run.query, signal: this.signal });
    this.addUsage(usage);
    return nodes;
  }

  private addUsage(usage: Usage): void {
    for (const key of Object.keys(this.usage) as (keyof Usage)[]) this.usage[key] += usage[key];
  }

  async checkpoint(loop: LoopState): Promise<void> {
    await this.flush();
    return this.checkpoints.save({ version: 1, loop, usage: this.usage, seqs: this.seqs, absorbed: [...this.absorbed] });
  }

  /** Keeps the run's hold alive; true when a cancel is pending. Also what the executor's heartbeat calls. */
  async heartbeat(): Promise<{ cancelled: boolean; waiting: InjectPayload[] }> {
    const { k } = this;
    const [cancel, ...items] = await this.deps.redis.breakpoint(k.active, k.userRuns, k.cancel, k.injects, this.run.id, ACTIVE_MARKER_TTL_SECONDS);
    return { cancelled: cancel === 1, waiting: items.map((item) => JSON.parse(item) as InjectPayload) };
  }

  /**
   * A breakpoint: hand the run back if the worker is shutting down, stop if it was cancelled,
   * otherwise absorb every waiting inject. Absorbed injects go into the loop's state through
   * `absorb` and are checkpointed before they leave the Redis list, so none is ever lost.
   */
  async breakpoint(iteration: number, absorb: (messages: ChatMessage[]) => LoopState): Promise<void> {
    if (this.control.draining()) throw new HandBack('shutdown');
    const { cancelled, waiting } = await this.heartbeat();
    if (cancelled) throw new RunCancelled();
    const fresh = await this.publishInjected(waiting, iteration);
    if (fresh.length > 0) await this.checkpoint(absorb(fresh));
    if (waiting.length > 0) await this.deps.redis.acknowledgeInjects(this.k.injects, waiting.length);
  }

  private async publishInjected(waiting: InjectPayload[], iteration: number): Promise<ChatMessage[]> {
    const fresh: ChatMessage[] = [];
    for (const payload of waiting) {
      if (this.absorbed.has(payload.message_id)) continue;
      await this.publish('injected', { message_id: payload.message_id, content: payload.content, iteration });
      this.absorbed.add(payload.message_id);
      fresh.push({ role: 'user', content: payload.content, injected: true });
    }
    return fresh;
  }

  /**
   * The run's one atomic end decision: finished (conversation released) or an inject is waiting
   * (answer it too). A pending cancel wins over finishing, so an accepted cancel never succeeds.
   */
  async tryFinish(): Promise<boolean> {
    await this.flush();
    const { k } = this;
    const result = await this.deps.redis.finishRun(k.injects, k.active, k.cancel, k.userRuns, this.run.id, 1);
    if (result === 2) throw new RunCancelled();
    return result === 1;
  }

  /** Failure and cancel: absorb (announce) whatever was injected, then release the conversation. */
  async release(iteration: number): Promise<void> {
    // Whatever was still streaming is moot now; a failed send there must not stop the release.
    await this.flush().catch(() => {});
    const { k } = this;
    for (;;) {
      const { waiting } = await this.heartbeat();
      await this.publishInjected(waiting, iteration);
      if (waiting.length > 0) await this.deps.redis.acknowledgeInjects(k.injects, waiting.length);
      if ((await this.deps.redis.finishRun(k.injects, k.active, k.cancel, k.userRuns, this.run.id, 0)) === 1) return;
    }
  }

  /** Runs the calls in order, publishing each call and result; returns the tool messages. */
  async callTools(iteration: number, calls: ToolCall[], scope = MAIN_SCOPE): Promise<ChatMessage[]> {
    const results: ChatMessage[] = [];
    for (const call of calls) {
      await this.publish('tool_call', { iteration, call_id: call.id, name: call.name, arguments: call.arguments }, scope);
      this.deps.logger.info({ run_id: this.run.id, tool: call.name, call_id: call.id }, 'tool executed');
      const { output, isError } = await runTool(this.tools, call, {
        signal: this.signal,
        now: this.deps.now,
        searchKnowledge: (query, topK) => this.deps.searchKnowledge(this.agent.knowledgeBaseIds, query, topK),
      });
      await this.publish('tool_result', { iteration, call_id: call.id, name: call.name, output, is_error: isError }, scope);
      results.push({ role: 'tool', content: typeof output === 'string' ? output : JSON.stringify(output), toolCallId: call.id, name: call.name });
    }
    return results;
  }
}

/**
 * Reasoning tokens count toward max_tokens, so a small limit can leave nothing visible: that is
 * an error saying so, never an empty success. A filtered answer may be empty (its finish reason says why).
 */
function requireVisible(result: ModelResult, model: string, maxTokens: number | undefined): ModelResult {
  if (result.text.trim() || result.toolCalls.length > 0 || result.finishReason === 'content_filter') return result;
  const spent = result.usage.reasoning_tokens;
  if (result.finishReason === 'length' || spent > 0) {
    const budget = maxTokens ? ` (max_tokens ${maxTokens})` : '';
    throw new RunFailure('empty_answer', `model "${model}" used its output budget${budget} on ${spent} reasoning tokens and gave no visible answer; raise max_tokens or lower the reasoning effort`);
  }
  throw new RunFailure('empty_answer', `model "${model}" returned an empty answer`);
}

export interface LoopOutcome {
  answer: string;
  finishReason: ModelResult['finishReason'];
}
