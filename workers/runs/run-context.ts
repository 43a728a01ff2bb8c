import type { Run } from '../../src/db/models.js';
import type { DocMode } from '../../src/shared/doc-modes.js';
import type { Logger } from '../../src/logger.js';
import { timeOutcome, toolLabel, type Metrics } from '../../src/metrics/registry.js';
import { LOCAL_MODEL } from '../../src/shared/model-settings.js';
import type { RetrievedChunk } from '../../src/knowledge/retrieval.js';
import { emptyUsage, type Citation, type EventData, type EventType, type Usage } from '../../src/shared/events.js';
import type { ApprovalDecision, BreakpointState, OutgoingEvent, RunRef, WorkerEngine } from '../../src/engine/worker-engine.js';
import type { InjectPayload } from '../../src/shared/redis-keys.js';
import type { GenerationSettings } from '../../src/shared/model-settings.js';
import type { OutputCheck, OutputFormat } from '../../src/shared/output-schema.js';
import { inlineCpu, type CpuWork } from '../../src/cpu/work.js';
import { runTool } from '../tools/registry.js';
import type { Tool } from '../tools/tool.js';
import { GROUNDED_INSTRUCTION, KNOWLEDGE_TOOL } from '../knowledge/citations.js';
import type { ChatMessage, ModelProvider, ModelResult, ModelSink, PlanNode, ToolCall } from '../models/types.js';
import type { Checkpoint, CheckpointWriter, LoopState } from './checkpoint.js';
import { HandBack, RunCancelled, RunFailure, type RunControl } from './run-control.js';
import { MAIN_SCOPE, type RunEvents } from './run-events.js';
import { runCallId, type ClientCall, type ToolApprovals } from './approvals.js';
import type { Attachment } from '../../src/shared/attachments.js';
import type { ImageSource } from '../../src/files/model-images.js';
import type { RunBudget } from './run-budget.js';
import type { RunTracer } from './telemetry.js';
import { tokenizer } from '../../src/shared/context-window.js';
import { estimatedUsage, promptText } from '../models/usage-estimate.js';
import type { MemoryService } from '../../src/memories/service.js';
import type { RunMemory } from '../tools/tool.js';

export { END_SCOPE, MAIN_SCOPE, nodeScope } from './run-events.js';

export interface AgentSettings {
  model: string;
  settings: GenerationSettings;
  instructions: string;
  maxIterations: number;
  knowledgeBaseIds: string[];
  /** How the run uses the knowledge bases: a tool (`auto`), retrieved first and answered only from (`grounded`), or not (`off`). */
  docMode: DocMode;
  /** DESIGN §23: what the final answer must be (the run's own, else its agent's output_schema); absent: prose. */
  outputFormat?: OutputFormat;
  /** DESIGN §25: the agent whose memories the run recalls and writes; absent: its agent has no memory. */
  memoryAgentId?: string;
}

/** What a run's tools reach outside the loop. */
export interface ToolServices {
  /** The run's logger, once the executor has the run (its ids on every line). */
  logger: Logger;
  metrics: Metrics;
  now: () => Date;
  searchKnowledge: (knowledgeBaseIds: string[], query: string, topK: number, options: { signal?: AbortSignal; minSimilarity?: number }) => Promise<RetrievedChunk[]>;
  /** doc_mode grounded: how similar a passage must be to count as found (keyword hits always count). */
  groundedMinSimilarity: number;
  /** The run's spans (DESIGN §18); absent when tracing is off: calls go straight through, no span built. */
  tracer?: RunTracer;
  /** OUTPUT_REPAIR_ATTEMPTS (DESIGN §23); 1 when absent. */
  outputRepairAttempts?: number;
  /** The users' memories (DESIGN §25); absent: no run has memory. */
  memories?: Pick<MemoryService, 'remember' | 'recall'>;
  /** Where answers are checked against their output schema (DESIGN §21, §23): the worker's CPU pool; inline when absent. */
  cpu?: Pick<CpuWork, 'checkOutput'>;
}

/** The parts a RunContext is made of; the executor builds them per attempt. */
export interface RunParts {
  run: Run;
  ref: RunRef;
  agent: AgentSettings;
  model: ModelProvider;
  /** The agent's tools; resolving (connector tool lists) alongside the loop's start, awaited by its first model call. */
  tools: Promise<Tool[]>;
  control: RunControl;
  events: RunEvents;
  /** The run engine's worker face: the attempt's hold (breakpoints, the end decision). */
  engine: WorkerEngine;
  checkpoints: CheckpointWriter;
  services: ToolServices;
  approvals: ToolApprovals;
  /** Time the run spent running before this attempt (checkpointed; waiting for approval does not count). */
  activeBeforeMs: number;
  /** The breakpoint state read when the attempt took the run: the loop's first breakpoint needs no round trip of its own. */
  taken: BreakpointState;
  /** Settles once this attempt's claim is written (rejects with Superseded when it lost). */
  claimed: Promise<void>;
  resumeFrom?: Checkpoint;
  /** The token budgets the run's model calls are charged to (DESIGN §18). */
  budget: RunBudget;
  /** The images sent with the question (DESIGN §15), and where model calls read their bytes. */
  images: Attachment[];
  imageSource: ImageSource;
}

/**
 * What a loop (ReAct or DAG) calls: the model, tools, events, injects, checkpoints and the end
 * decision of the run it executes. Events go through RunEvents (numbering, batching); the Redis
 * side goes through the run engine (src/engine/worker-engine.ts).
 */
export class RunContext {
  readonly run: Run;
  readonly agent: AgentSettings;
  readonly usage: Usage;
  private readonly absorbed: Set<string>;
  private taken: BreakpointState | undefined;
  private readonly startedAt = Date.now();

  constructor(private readonly parts: RunParts) {
    this.run = parts.run;
    this.agent = parts.agent;
    this.taken = parts.taken;
    this.usage = { ...(parts.resumeFrom?.usage ?? emptyUsage()) };
    this.absorbed = new Set(parts.resumeFrom?.absorbed ?? []);
  }

  /** The run's question as the model reads it: its text and the images sent with it. */
  question(content = this.run.query): ChatMessage {
    const { images } = this.parts;
    return images.length > 0 ? { role: 'user', content, images } : { role: 'user', content };
  }

  /** An event outside the numbering (`status: resumed`). */
  announce<T extends EventType>(type: T, data: EventData<T>): Promise<void> {
    return this.parts.events.announce(type, data);
  }

  /** OUTPUT_REPAIR_ATTEMPTS: how often an answer its output schema refuses goes back to the model (DESIGN §23). */
  get outputRepairAttempts(): number {
    return this.parts.services.outputRepairAttempts ?? 1;
  }

  /** The answer's text checked against the run's output format, off the worker's event loop when it has a pool. */
  checkOutput(format: OutputFormat, text: string): Promise<OutputCheck> {
    return (this.parts.services.cpu ?? inlineCpu).checkOutput(format, text);
  }

  /** The user's memories through the run's agent (DESIGN §25); undefined when its agent has no memory. */
  memory(): RunMemory | undefined {
    const { memories } = this.parts.services;
    const agentId = this.agent.memoryAgentId;
    if (!memories || !agentId) return undefined;
    const userId = this.run.user_id;
    return {
      remember: (content, callKey) => memories.remember(userId, agentId, content, callKey ?? null),
      recall: (query) => memories.recall(userId, agentId, query, undefined, this.signal),
    };
  }

  /** The run's logger: its ids, and the request that started it, on every line. */
  get log(): Logger {
    return this.parts.services.logger;
  }

  get claimed(): Promise<void> {
    return this.parts.claimed;
  }

  get signal(): AbortSignal {
    return this.parts.control.signal;
  }

  publish<T extends EventType>(type: T, data: EventData<T>, scope = MAIN_SCOPE): Promise<void> {
    return this.parts.events.publish(type, data, scope);
  }

  /** An event numbered now, sent after the row that records its state (RunEvents.number). */
  number<T extends EventType>(type: T, data: EventData<T>, scope = MAIN_SCOPE): OutgoingEvent {
    return this.parts.events.number(type, data, scope);
  }

  publishNumbered(event: OutgoingEvent): Promise<void> {
    return this.parts.events.publishNumbered(event);
  }

  setScope(scope: string, seq: number): void {
    this.parts.events.setScope(scope, seq);
  }

  flush(): Promise<void> {
    return this.parts.events.flush();
  }

  sink(iteration: number, options: { silent?: boolean; scope?: string } = {}): ModelSink {
    const thought = (text: string) => this.publish('thought', { iteration, text }, options.scope);
    if (options.silent) return { token: async () => {}, thought: async () => {}, notice: thought };
    const spoken = (options.scope ?? MAIN_SCOPE) === MAIN_SCOPE;
    if (spoken) this.spoken = '';
    const token = (text: string) => {
      if (spoken) this.spoken += text;
      return this.publish('token', { iteration, text }, options.scope);
    };
    return { token, thought, notice: thought };
  }

  /** What the run has said: the answer tokens of its latest model call (cut short if it was stopped), else its latest answer text. */
  saidSoFar(): string | null {
    return this.spoken || this.answerSoFar;
  }

  /** Answer tokens of the latest main-scope model call. */
  private spoken = '';

  /**
   * One model call. `grounded` (doc_mode grounded, DESIGN §14): the passages were retrieved before
   * the call, so the model may not search again and answers under the grounding instruction.
   * `structured`: the call may give the run's final answer, so the model is sent its output format (DESIGN §23).
   */
  async complete(messages: ChatMessage[], iteration: number, options: { tools?: Tool[]; silent?: boolean; scope?: string; grounded?: boolean; structured?: boolean } = {}): Promise<ModelResult> {
    const { model, outputFormat } = this.agent;
    const settings = options.structured && outputFormat ? { ...this.agent.settings, outputFormat } : this.agent.settings;
    let tools = options.tools ?? (await this.parts.tools);
    if (options.grounded) {
      tools = tools.filter((tool) => tool.name !== KNOWLEDGE_TOOL);
      messages = withGroundingInstruction(messages);
    }
    const { imageSource } = this.parts;
    const sink = this.sink(iteration, options);
    const call = (streamed: StreamedText) => this.parts.model.complete({ model, settings, messages, tools, signal: this.signal, log: this.parts.services.logger, imageSource }, streamed.watch(sink));
    const result = await this.modelCall(() => promptText(messages), (streamed) => this.traced((tracer, run) => tracer.chat(this.chatRequest(messages), run), () => call(streamed)));
    if (result.text) this.answerSoFar = result.text;
    return requireVisible(result, model, settings.maxTokens);
  }

  async plan(): Promise<PlanNode[]> {
    const { model, settings } = this.agent;
    const { images, imageSource } = this.parts;
    const call = () => this.parts.model.plan({ model, settings, query: this.run.query, images, imageSource, signal: this.signal, log: this.parts.services.logger });
    const { nodes } = await this.modelCall(() => this.run.query, () => this.traced((tracer, run) => tracer.plan(this.chatRequest(() => [this.question()]), run), call));
    return nodes;
  }

  /**
   * DESIGN §20: the conversation's summary extended with `messages` by the run's own model, at most
   * `maxTokens`; a model call like any other (timed, traced, counted in the run's usage and budgets).
   */
  async summarize(previous: string | null, messages: ChatMessage[], maxTokens: number): Promise<string> {
    const { model } = this.agent;
    const settings = { ...this.agent.settings, maxTokens };
    const call = async (): Promise<ModelResult> => {
      const { text, usage } = await this.parts.model.summarize({ model, settings, previous, messages, signal: this.signal, log: this.parts.services.logger });
      return { text, usage, toolCalls: [], finishReason: 'stop' };
    };
    const chat = { model, settings, conversationId: this.run.conversation_id, messages: () => messages };
    const result = await this.modelCall(() => promptText(previous ? [{ role: 'system', content: previous }, ...messages] : messages), () => this.traced((tracer, run) => tracer.chat(chat, run), call), maxTokens);
    return result.text;
  }

  /** The last text a model call gave: what a run stopped by its budget keeps as its answer. */
  private answerSoFar: string | null = null;

  /**
   * One model call, charged whatever becomes of it (DESIGN §21): it holds a reservation on the run's
   * budgets while in flight (waiting for room first); its reported usage is counted in the run and
   * replaces the reservation. Cut off (cancel, interrupt, rollback, timeout, error) it is charged an
   * estimate instead: the prompt and the text it streamed so far, counted, marked `estimated`.
   */
  private async modelCall<T extends { usage: Usage }>(prompt: () => string, call: (streamed: StreamedText) => Promise<T>, maxTokens = this.agent.settings.maxTokens): Promise<T> {
    const { budget } = this.parts;
    const promptTokens = budget.active ? (await tokenizer()).count(prompt()) : 0;
    const reservation = await budget.reserve(promptTokens, maxTokens, this.signal, () => this.answerSoFar);
    const streamed = new StreamedText();
    let usage: Usage;
    let result: T;
    try {
      result = await this.timed(() => call(streamed));
      usage = result.usage;
    } catch (err) {
      usage = await estimatedUsage(prompt(), streamed.text);
      this.addUsage(usage);
      await budget.settle(reservation, usage).catch((settleErr: unknown) => this.log.warn({ err: settleErr }, 'could not charge a cut-off model call to its budgets'));
      throw err;
    }
    this.addUsage(usage);
    await budget.settle(reservation, usage);
    return result;
  }

  private timed<T>(call: () => Promise<T>): Promise<T> {
    const { model, settings } = this.agent;
    const provider = model === LOCAL_MODEL ? 'local' : 'gateway';
    const labels = { provider, format: provider === 'local' ? 'local' : settings.apiFormat };
    return timeOutcome(this.parts.services.metrics.modelCallDuration, labels, this.signal, call);
  }

  private addUsage(usage: Usage): void {
    for (const key of TOKEN_KINDS) this.usage[key] += usage[key];
    if (usage.estimated) this.usage.estimated = true;
  }

  /** `run` inside the span `span` makes of it when tracing is on (DESIGN §18); straight through otherwise. */
  private traced<T>(span: (tracer: RunTracer, run: () => Promise<T>) => Promise<T>, run: () => Promise<T>): Promise<T> {
    const { tracer } = this.parts.services;
    return tracer ? span(tracer, run) : run();
  }

  private chatRequest(messages: ChatMessage[] | (() => ChatMessage[])) {
    const { model, settings } = this.agent;
    return { model, settings, conversationId: this.run.conversation_id, messages: typeof messages === 'function' ? messages : () => messages };
  }

  /** A DAG node's work, in a span of its own when tracing is on. */
  inNode<T>(nodeId: string, run: () => Promise<T>): Promise<T> {
    return this.traced((tracer, work) => tracer.node(nodeId, work), run);
  }

  async checkpoint(loop: LoopState): Promise<void> {
    await this.flush();
    return this.parts.checkpoints.save(this.snapshot(loop));
  }

  /** What a checkpoint of `loop` holds now (events numbered so far included); without a loop, the one a compaction saves (DESIGN §20). */
  snapshot(loop: LoopState): Checkpoint;
  snapshot(loop: undefined, compacted: true): Checkpoint;
  snapshot(loop: LoopState | undefined, compacted?: true): Checkpoint {
    return { version: 1, ...(loop ? { loop } : {}), ...(compacted ? { compacted } : {}), usage: this.usage, seqs: { ...this.parts.events.seqs }, absorbed: [...this.absorbed], activeMs: this.activeMs };
  }

  /** Time the run has spent running, this attempt included. */
  get activeMs(): number {
    return this.parts.activeBeforeMs + (Date.now() - this.startedAt);
  }

  /** Keeps the run's hold alive; reports a pending cancel and waiting injects. Also what the executor's heartbeat calls. */
  heartbeat(): Promise<BreakpointState> {
    return this.parts.engine.breakpoint(this.parts.ref);
  }

  /**
   * A breakpoint: hand the run back if the worker is shutting down, stop if it was cancelled,
   * otherwise absorb every waiting inject. Absorbed injects go into the loop's state through
   * `absorb` and are checkpointed before they leave the Redis list, so none is ever lost.
   */
  async breakpoint(iteration: number, absorb: (messages: ChatMessage[]) => LoopState): Promise<void> {
    if (this.parts.control.draining()) throw new HandBack('shutdown');
    const { cancelPending, waiting } = this.taken ?? (await this.heartbeat());
    this.taken = undefined;
    if (cancelPending) throw new RunCancelled();
    const fresh = await this.publishInjected(waiting, iteration);
    if (fresh.length > 0) await this.checkpoint(absorb(fresh));
    if (waiting.length > 0) await this.parts.engine.acknowledge(this.parts.ref, waiting.length);
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
    const ending = await this.parts.engine.finish(this.parts.ref, String(this.run.attempt));
    if (ending.outcome === 'cancel_pending') throw new RunCancelled();
    if (ending.outcome === 'inject_waiting') return false;
    this.successor = ending.successor;
    return true;
  }

  /** The queued run that took the conversation over when this one let go of it (DESIGN §19): its job is woken once this run's end is recorded. */
  successor: string | null = null;

  /** Failure and cancel: absorb (announce) whatever was injected, then release the conversation. */
  async release(iteration: number): Promise<void> {
    // Whatever was still streaming is moot now; a failed send there must not stop the release.
    await this.flush().catch(() => {});
    const { engine, ref } = this.parts;
    for (;;) {
      const { waiting } = await this.heartbeat();
      await this.publishInjected(waiting, iteration);
      if (waiting.length > 0) await engine.acknowledge(ref, waiting.length);
      const released = await engine.release(ref, String(this.run.attempt));
      if (released.outcome === 'released') {
        this.successor = released.successor;
        return;
      }
    }
  }

  /**
   * Runs the calls in order, publishing each call and result; returns the tool messages. Calls the
   * agent gates (DESIGN §11) run only once a person has decided: until then this publishes
   * `approval_required` for each and throws AwaitingApproval; a rejected call's result is an error
   * the model reads. Calls of client tools (DESIGN §23) are answered by the client: until every
   * output is in, this publishes `client_tool_calls` and throws AwaitingApproval carrying them (the
   * run parks `requires_action`); their outputs are the results.
   */
  async callTools(iteration: number, calls: ToolCall[], scope = MAIN_SCOPE): Promise<ChatMessage[]> {
    const { approvals } = this.parts;
    const gated = approvals.gated(calls, scope);
    const decisions = await approvals.decisions(gated, async (waiting) => {
      for (const { approvalId, call } of waiting) await this.publish('approval_required', { iteration, call_id: approvalId, name: call.name, arguments: call.arguments }, scope);
    });
    const clientCalls = approvals.clientCalls(calls, scope);
    const outputs = await approvals.outputs(clientCalls, async (waiting) => {
      await this.publish('client_tool_calls', { iteration, tool_calls: waiting.map((c) => ({ id: c.clientId, name: c.call.name, arguments: c.call.arguments })) }, scope);
    });
    const decisionOf = new Map(gated.map((g) => [g.call, decisions.get(g.approvalId)]));
    const clientOf = new Map(clientCalls.map((c) => [c.call, c]));
    const results: ChatMessage[] = [];
    for (const call of calls) {
      const client = clientOf.get(call);
      results.push(client ? await this.clientResult(iteration, client, outputs.get(client.approvalId)!, scope) : await this.runCall(iteration, call, decisionOf.get(call), scope));
    }
    return results;
  }

  /** A client tool call's result: the output its client sent, published under the id the client knows it by. */
  private async clientResult(iteration: number, { clientId, call }: ClientCall, output: string, scope: string): Promise<ChatMessage> {
    this.parts.services.logger.info({ tool: call.name, call_id: clientId }, 'client tool output received');
    await this.publish('tool_result', { iteration, call_id: clientId, name: call.name, output, is_error: false }, scope);
    return { role: 'tool', content: output, toolCallId: call.id, name: call.name };
  }

  private async runCall(iteration: number, call: ToolCall, decision: ApprovalDecision | undefined, scope: string): Promise<ChatMessage> {
    const { services } = this.parts;
    const tools = await this.parts.tools;
    await this.publish('tool_call', { iteration, call_id: call.id, name: call.name, arguments: call.arguments }, scope);
    services.logger.info({ tool: call.name, call_id: call.id, ...(decision ? { approval: decision.decision } : {}) }, 'tool executed');
    const { output, isError } = decision?.decision === 'reject'
      ? { output: `rejected: ${decision.message || 'no reason given'}`, isError: true }
      : await timeOutcome(services.metrics.toolCallDuration, { tool: toolLabel(call.name) }, this.signal, () =>
          this.traced((tracer, run) => tracer.tool(call, tools, this.run.conversation_id, run), () => runTool(tools, call, {
            signal: this.signal,
            now: services.now,
            memory: this.memory(),
            callKey: `${this.run.id}/${runCallId(call, scope)}`,
            searchKnowledge: (query, topK) =>
              this.traced((tracer, run) => tracer.retrieval(this.agent.knowledgeBaseIds, query, topK, run), () => services.searchKnowledge(this.agent.knowledgeBaseIds, query, topK, {
                signal: this.signal,
                minSimilarity: this.agent.docMode === 'grounded' ? services.groundedMinSimilarity : undefined,
              })),
          })), (result) => (result.isError ? 'error' : 'ok'));
    await this.publish('tool_result', { iteration, call_id: call.id, name: call.name, output, is_error: isError }, scope);
    const content = typeof output === 'string' ? output : JSON.stringify(output);
    return { role: 'tool', content, toolCallId: call.id, name: call.name, ...(isError ? { isError } : {}) };
  }
}

const TOKEN_KINDS = ['prompt_tokens', 'completion_tokens', 'reasoning_tokens', 'total_tokens'] as const;

/** What a model call has streamed so far (answer and thoughts): the completion of its estimate when it is cut off. */
class StreamedText {
  text = '';

  watch(sink: ModelSink): ModelSink {
    return {
      token: (text) => this.add(text, sink.token(text)),
      thought: (text) => this.add(text, sink.thought(text)),
      notice: (text) => sink.notice(text),
    };
  }

  private add(text: string, sent: Promise<unknown>): Promise<unknown> {
    this.text += text;
    return sent;
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

/** The grounding instruction joins the system message (formats take one system prompt). */
function withGroundingInstruction(messages: ChatMessage[]): ChatMessage[] {
  const [first, ...rest] = messages;
  if (first?.role === 'system') return [{ ...first, content: `${first.content}\n\n${GROUNDED_INSTRUCTION}` }, ...rest];
  return [{ role: 'system', content: GROUNDED_INSTRUCTION }, ...messages];
}

export interface LoopOutcome {
  answer: string;
  /** DESIGN §23: the answer parsed, valid against the run's output format; absent for prose. */
  output?: unknown;
  finishReason: ModelResult['finishReason'];
  /** The knowledge-base passages the answer used (DESIGN §14). */
  citations: Citation[];
}
