import { randomUUID } from 'node:crypto';
import type { Agent, Models, RunMode, Run } from '../db/models.js';
import type { Config } from '../config.js';
import type { DocMode } from '../shared/doc-modes.js';
import type { ConversationService } from '../conversations/service.js';
import { findOwned } from '../db/owned.js';
import { ConflictError, GoneError, NotFoundError, QuotaExceededError, RateLimitedError, ValidationError } from '../shared/errors.js';
import { budgetOf, contextWindowOf, CONTEXT_WINDOW_MIN, DEFAULT_CONTEXT_WINDOW } from '../shared/context-window.js';
import { inlineCpu, type CpuWork } from '../cpu/work.js';
import { LOCAL_MODEL } from '../shared/model-settings.js';
import { secondsUntil, type BudgetLedger, type BudgetRef, type SpentBudget } from '../budgets/ledger.js';
import type { Actor, AuditLog } from '../audit/log.js';
import type { ApprovalDecision, Claim, NewRun, PriorMessage, RunRef } from '../engine/types.js';
import type { WebEngine } from '../engine/web-engine.js';

export { runRef } from '../engine/web-engine.js';
import type { Sampling } from '../shared/sampling.js';
import type { StoredEvent } from '../shared/events.js';
import type { OutputFormat } from '../shared/output-schema.js';
import type { InjectPayload } from '../shared/redis-keys.js';
import { STORED_FORMAT_MAX, STORED_TEXT_MAX, type RunJob, type StoredRun } from '../shared/jobs.js';
import type { MultitaskStrategy } from '../shared/multitask.js';
import { activeRunTrace } from '../telemetry/propagation.js';
import type { Metrics } from '../metrics/registry.js';
import type { FileService } from '../files/service.js';
import { TOOL_OUTPUTS_MAX, type ClientTool, type ToolOutput } from '../shared/client-tools.js';
import { runToolNames, TOOL_NAMES } from '../shared/tools.js';
import { SEPARATOR as CONNECTOR_TOOL_SEPARATOR } from '../connectors/tool-names.js';

/** When a user at the active-run cap, or a conversation at its queue bound, may try again: runs usually finish within seconds. */
const RUN_LIMIT_RETRY_SECONDS = 5;
/** PARKED_RUNS_PER_USER's default, for a service built without it. */
const DEFAULT_PARKED_RUNS_PER_USER = 20;

export interface StartRequest {
  userId: string;
  mode: RunMode;
  query: string;
  conversationId?: string | null;
  agentId?: string | null;
  /** The caller's own string, returned with the run and in its webhooks. */
  userMetadata?: string | null;
  /** How the run uses its agent's knowledge bases; null = `auto`. */
  docMode?: DocMode | null;
  /** The request that starts the run: the worker's log lines of the run carry it. */
  requestId?: string;
  /** The caller's images to show the model with the question (DESIGN §15). */
  imageIds?: string[];
  /** Earlier turns an OpenAI-style client sent (a fresh conversation only), and its sampling parameters (DESIGN §16). */
  history?: PriorMessage[];
  sampling?: Sampling | null;
  /** The token budgets of the credential that starts the run (DESIGN §18): a spent one refuses it; the run's calls are charged to them. */
  budgets?: readonly BudgetRef[];
  /** What to do when the conversation already has an active run (DESIGN §19); default `reject`. */
  multitaskStrategy?: MultitaskStrategy;
  /** The schedule whose tick or trigger starts the run (DESIGN §19): its record carries it. */
  scheduleId?: string;
  /** DESIGN §23: what the run's answer must be (overrides its agent's output_schema); null or absent: the agent's. */
  outputFormat?: OutputFormat | null;
  /** Functions the client runs itself (DESIGN §23), offered to the model beside the agent's tools; a name clash → 422. */
  clientTools?: ClientTool[];
  /** DESIGN §24: an eval's item run: its id (written on the item before the run starts), its eval, and the agent's version it runs. */
  runId?: string;
  evalId?: string;
  agentVersion?: number;
}

/** A run refused because a budget of its key or user is spent: 429 until the period resets. */
function budgetRefusal({ ref, resetsAt }: SpentBudget): QuotaExceededError {
  const whose = ref.scope === 'key' ? "This API key's" : 'Your';
  return new QuotaExceededError(`${whose} token budget of ${ref.limit} tokens per ${ref.period} is spent; it resets at ${resetsAt.toISOString()}`, secondsUntil(resetsAt));
}

/** The limits a RunService starts runs under, from the deployment's config: the web and the schedule ticks share them. */
export const runLimits = (config: Pick<Config, 'runs' | 'model'>) => ({
  perUser: config.runs.perUserLimit,
  parkedPerUser: config.runs.parkedPerUser,
  contextWindows: { defaultModel: config.model.defaultModel, gateway: config.model.defaultContextWindow },
});


/** The web side of a run (DESIGN §5 step 1 and inject): persist, claim the conversation, enqueue. */
export class RunService {
  constructor(
    private readonly models: Models,
    private readonly conversations: ConversationService,
    private readonly files: Pick<FileService, 'attachable'>,
    /** The run engine: every step that writes a run goes through it. */
    private readonly engine: WebEngine,
    /** `contextWindows` (DESIGN §20): what a run's model reads when its agent sets no context_window; absent: the built-in defaults. */
    private readonly limits: { perUser: number; parkedPerUser?: number; contextWindows?: { defaultModel: string; gateway: number } },
    private readonly audit: AuditLog,
    private readonly metrics: Metrics,
    private readonly ledger: Pick<BudgetLedger, 'spent'>,
    /** Where long messages are token-counted: the web's worker threads (DESIGN §21). */
    private readonly cpu: Pick<CpuWork, 'firstAbove'> = inlineCpu,
  ) {}

  /** `onClaimed`: told once the claim has published the run's `run` event, while its row and job are written (the SSE answer listens from there). */
  async start(request: StartRequest, onClaimed?: (ref: RunRef, runEvent: StoredEvent) => void): Promise<Run> {
    const { userId } = request;
    const agentId = request.agentId ?? null;
    const budgets = request.budgets ?? [];
    const [agent, existing, attachments, spent] = await Promise.all([
      agentId ? findOwned(this.models.Agent, userId, agentId, 'Agent') : undefined,
      request.conversationId ? this.conversations.own(userId, request.conversationId) : undefined,
      this.files.attachable(userId, request.imageIds ?? []),
      this.ledger.spent(budgets),
    ]);
    if (spent) throw budgetRefusal(spent);
    // A run that names no agent continues with its conversation's: a deleted one (DESIGN §20) starts no new run either.
    const runAgent = agent ?? (existing?.agent_id ? await findOwned(this.models.Agent, userId, existing.agent_id, 'Agent') : undefined);
    refuseToolNameClash(request.clientTools ?? [], runToolNames(runAgent, request.docMode ?? null));
    await this.refuseOversized(request, agent, existing?.agent_id ?? null);
    const ref: RunRef = { id: request.runId ?? randomUUID(), conversationId: existing?.id ?? randomUUID(), userId };
    // The request's trace, carried to the worker in the job (DESIGN §18); none when tracing is off.
    const traced = activeRunTrace();
    const traceId = traced?.traceId ?? null;
    const announced = { run_id: ref.id, conversation_id: ref.conversationId, agent_id: agentId ?? existing?.agent_id ?? null, mode: request.mode, status: 'queued' as const, trace_id: traceId };
    const strategy = request.multitaskStrategy ?? 'reject';
    const newRun: NewRun = { runId: ref.id, userId, conversationId: ref.conversationId, agentId, mode: request.mode, query: request.query, userMetadata: request.userMetadata ?? null, docMode: request.docMode ?? null, attachments, history: existing ? undefined : request.history, sampling: request.sampling, traceId, scheduleId: request.scheduleId, questionId: randomUUID(), outputFormat: request.outputFormat ?? null, clientTools: request.clientTools?.length ? request.clientTools : null, evalId: request.evalId ?? null, agentVersion: request.agentVersion ?? null };
    // Carried by the job, the row may commit asynchronously: Redis holds what a Postgres crash could lose.
    const stored = storedRunOf(newRun, !existing);
    const jobFor = (queued: boolean): RunJob => ({ runId: ref.id, conversationId: ref.conversationId, userId, requestId: request.requestId, ...(budgets.length > 0 ? { budgets: [...budgets] } : {}), ...(traced ? { traceparent: traced.traceparent } : {}), ...(queued ? { queued: true as const } : {}), ...(stored ? { stored } : {}) });
    const parkedLimit = request.clientTools?.length ? (this.limits.parkedPerUser ?? DEFAULT_PARKED_RUNS_PER_USER) : 0;
    const started = await this.engine.start({ ref, announced, userLimit: this.limits.perUser, parkedLimit, strategy, newRun, jobFor, onClaimed });
    if (started.outcome === 'refused') refuseClaim(started.claim.outcome, { ...this.limits, parkedPerUser: parkedLimit }, this.engine.queueLimit);
    else this.metrics.runsStarted.inc({ mode: request.mode });
    return (started as { run: Run }).run;
  }

  /**
   * DESIGN §20: a message larger than what the run's model can read (its context window less the
   * answer's max_tokens) → 422, before anything is stored. Messages of at most half the smallest
   * window's bytes fit any agent (a token is at least a byte): no lookup, no tokenizer; longer ones
   * load the tokenizer (once per process) only when their bytes exceed the room.
   */
  private async refuseOversized(request: StartRequest, agent: Agent | undefined, conversationAgentId: string | null): Promise<void> {
    const texts = [...(request.history ?? []).map((m) => m.content), request.query];
    if (texts.every((text) => text.length * 3 <= CONTEXT_WINDOW_MIN / 2)) return;
    const runAgent = agent ?? (conversationAgentId ? await this.models.Agent.query().findById(conversationAgentId) : undefined);
    const defaults = this.limits.contextWindows ?? { defaultModel: LOCAL_MODEL, gateway: DEFAULT_CONTEXT_WINDOW };
    const window = contextWindowOf(runAgent?.model ?? defaults.defaultModel, runAgent?.context_window, defaults.gateway);
    const asked = request.sampling?.max_tokens;
    const maxTokens = asked === undefined ? runAgent?.max_tokens : Math.min(asked, runAgent?.max_tokens ?? asked);
    const { room } = budgetOf(window, maxTokens);
    // The first message too large is reported: counting the rest would change nothing but the cost.
    const above = await this.cpu.firstAbove(texts, room);
    if (above) {
      const { index, tokens } = above;
      const question = index === texts.length - 1;
      throw new ValidationError([{
        loc: question ? ['body', 'q'] : ['body', 'messages', index],
        msg: `Value error, the message is ${tokens} tokens, larger than the agent's context window of ${window} tokens allows (${room} for the input after max_tokens)`,
        type: 'value_error',
        ctx: { tokens, context_window: window, input_tokens: room },
      }]);
    }
  }

  /**
   * Persists and queues an injected message while the conversation has an active run; otherwise
   * 409 and nothing is stored (the transaction rolls back). The check-and-push is one Lua step.
   */
  async inject(userId: string, conversationId: string, content: string): Promise<void> {
    await this.conversations.own(userId, conversationId);
    const payload: InjectPayload = { message_id: randomUUID(), content };
    await this.models.Message.knex().transaction(async (trx) => {
      await this.models.Message.query(trx).insert({ id: payload.message_id, conversation_id: conversationId, role: 'user', content, injected: true });
      const runId = await this.engine.inject(userId, conversationId, payload);
      if (!runId) throw new ConflictError('no_active_execution', 'The conversation has no active execution to inject into');
      // The active run's row may not be committed yet (its claim comes first, or it was just handed the conversation
      // from the queue): then the message names no run rather than failing a reference an accepted inject cannot undo.
      await trx('messages').update({ run_id: trx('runs').select('id').where({ id: runId }) }).where({ id: payload.message_id });
    });
  }

  async ownRun(userId: string, runId: string): Promise<Run> {
    return findOwned(this.models.Run, userId, runId, 'Run');
  }

  /**
   * Accepts a cancel while the run is queued or running (any web process, any worker: the flag
   * and the doorbell are in Redis); a finished run → 409.
   */
  async cancel(userId: string, runId: string): Promise<Run> {
    return this.requestCancel(await this.ownRun(userId, runId));
  }

  /** An administrator's cancel: any user's run (DESIGN §9), recorded in the audit log. */
  async cancelAny(runId: string, actor: Actor): Promise<Run> {
    const run = await this.anyRun(runId);
    await this.requestCancel(run);
    await this.audit.record(actor, { action: 'run.cancel', targetType: 'run', targetId: run.id, details: { user_id: run.user_id, status: run.status, mode: run.mode } });
    return run;
  }

  private async requestCancel(run: Run): Promise<Run> {
    if (!(await this.engine.cancel(run))) throw new ConflictError('no_active_execution', `The run has already finished (${run.status}); there is nothing to cancel`);
    return run;
  }

  /**
   * A person's decision on a tool call the run waits on (DESIGN §11); the last one wakes the run.
   * 409 when the run does not wait for a decision on that call (unknown, decided, or the run is over).
   */
  async decide(userId: string, runId: string, callId: string, decision: ApprovalDecision): Promise<'recorded' | 'resuming'> {
    const run = await this.ownRun(userId, runId);
    const outcome = await this.engine.decide(run, callId, decision);
    if (outcome === 'not_pending') throw new ConflictError('approval_not_pending', `The run does not wait for a decision on call "${callId}"`);
    return outcome;
  }

  /**
   * The client's outputs for calls its run is parked on (DESIGN §23); the last one resumes the run.
   * 404 another user's or unknown run; 409 `not_requires_action` when the run is not parked for its
   * client; 409 `tool_output_not_pending` when a call is unknown or already answered (nothing is recorded).
   */
  async submitToolOutputs(userId: string, runId: string, outputs: ToolOutput[]): Promise<'recorded' | 'resuming'> {
    const run = await this.ownRun(userId, runId);
    // A row still `running` may be parking right now (the calls are announced before the row is written): the outputs are taken if its calls wait.
    const parking = run.status === 'running';
    if (run.status !== 'requires_action' && !parking) throw notRequiringAction(run);
    const recorded = await this.engine.submitToolOutputs(run, outputs);
    if (recorded.outcome === 'cancelled') throw new ConflictError('not_requires_action', 'The run was cancelled; it takes no more tool outputs');
    if (recorded.outcome === 'not_pending' && parking) throw notRequiringAction(run);
    if (recorded.outcome === 'not_pending') throw new ConflictError('tool_output_not_pending', `The run does not wait for an output of call "${recorded.callId}" (unknown, or already answered)`);
    return recorded.outcome;
  }

  /** The user's run parked in `requires_action` on every one of these call ids (for /v1 resuming by history), if any. */
  async findRequiringAction(userId: string, callIds: string[]): Promise<Run | undefined> {
    if (callIds.length === 0 || callIds.length > TOOL_OUTPUTS_MAX) return undefined;
    const wanted = JSON.stringify({ tool_calls: callIds.map((id) => ({ id })) });
    // Bounded by the partial index of active runs `runs_active` (status, user_id) where status is waiting or requires_action.
    return this.models.Run.query().where({ user_id: userId, status: 'requires_action' }).whereRaw('required_action @> ?::jsonb', [wanted]).orderBy('id').first();
  }

  /**
   * The run, if its event stream can still be joined; 410 once a finished run's stream has expired
   * (RUN_STREAM_TTL_S), with its outcome from Postgres so a late re-join still learns how it ended.
   */
  async joinableRun(userId: string, runId: string): Promise<Run> {
    return this.joinable(await this.ownRun(userId, runId));
  }

  /** Any user's run, for administrators (DESIGN §9): its page in the console reads it and its events. */
  async anyRun(runId: string): Promise<Run> {
    const run = await this.models.Run.query().findById(runId);
    if (!run) throw new NotFoundError('Run not found');
    return run;
  }

  async joinableAnyRun(runId: string): Promise<Run> {
    return this.joinable(await this.anyRun(runId));
  }

  private async joinable(run: Run): Promise<Run> {
    if (run.isFinal && !(await this.engine.streamExists(run))) {
      const outcome = { status: run.status, answer: run.answer, usage: run.usage };
      throw new GoneError(`The run's event stream has expired; GET /api/runs/${run.id} holds its result`, outcome);
    }
    return run;
  }
}

/** What a job carries of a new run's row (StoredRun), or undefined for one too large to carry: a client's history, images or sampling, long texts, a large output schema. */
function storedRunOf(run: NewRun, opensConversation: boolean): StoredRun | undefined {
  const plain = !run.history?.length && run.attachments.length === 0 && !run.sampling && !run.clientTools?.length;
  const format = run.outputFormat ? JSON.stringify(run.outputFormat) : '';
  const short = run.query.length <= STORED_TEXT_MAX && (run.userMetadata?.length ?? 0) <= STORED_TEXT_MAX && format.length <= STORED_FORMAT_MAX;
  if (!plain || !short || !run.questionId) return undefined;
  return { agentId: run.agentId, mode: run.mode, query: run.query, userMetadata: run.userMetadata, docMode: run.docMode, traceId: run.traceId ?? null, scheduleId: run.scheduleId ?? null, ...(run.evalId ? { evalId: run.evalId, agentVersion: run.agentVersion ?? null } : {}), questionId: run.questionId, ...(run.outputFormat ? { outputFormat: run.outputFormat } : {}), ...(opensConversation ? { opensConversation: true as const } : {}) };
}

/** 409 to tool outputs for a run that is not parked for its client (running, waiting for approval, or over). */
function notRequiringAction(run: Run): ConflictError {
  return new ConflictError('not_requires_action', `The run does not wait for tool outputs (it is ${run.status})`);
}

/**
 * DESIGN §23: a client tool may not take the name of a tool the run has (`runTools`: its agent's,
 * knowledge search, memory), of any platform tool, or a connector tool's form: the model could not
 * tell them apart, and the platform's tool would run instead of the run parking for the client.
 */
function refuseToolNameClash(clientTools: ClientTool[], runTools: readonly string[]): void {
  const taken = new Set<string>([...runTools, ...TOOL_NAMES]);
  const clashes = clientTools.flatMap((tool, index) => (taken.has(tool.name) || tool.name.includes(CONNECTOR_TOOL_SEPARATOR) ? [{ tool, index }] : []));
  if (clashes.length === 0) return;
  throw new ValidationError(clashes.map(({ tool, index }) => ({
    loc: ['body', 'client_tools', index, 'name'],
    msg: `Value error, "${tool.name}" clashes with a tool of the run (its tools and the platform's: ${[...taken].join(', ')}; connector tools are named <connector>${CONNECTOR_TOOL_SEPARATOR}<tool>)`,
    type: 'value_error',
  })));
}

/** A claim the conversation or the user's limits refused (DESIGN §5, §19). */
function refuseClaim(outcome: Claim['outcome'], { perUser, parkedPerUser }: { perUser: number; parkedPerUser: number }, queueLimit: number): void {
  if (outcome === 'busy') throw new ConflictError('conversation_busy', 'This conversation already has an active run; inject into it, or send multitask_strategy enqueue, interrupt or rollback');
  if (outcome === 'full') throw new RateLimitedError(`This conversation already has ${queueLimit} runs waiting (RUN_QUEUE_PER_CONVERSATION); wait for one to start`, RUN_LIMIT_RETRY_SECONDS);
  if (outcome === 'limit') throw new RateLimitedError(`You already have ${perUser} active runs; wait for one to finish`, RUN_LIMIT_RETRY_SECONDS);
  if (outcome === 'parked_limit') throw new RateLimitedError(`You already have ${parkedPerUser} runs with client tools that are unfinished or wait for tool outputs (PARKED_RUNS_PER_USER); answer or cancel one first`, RUN_LIMIT_RETRY_SECONDS);
}
