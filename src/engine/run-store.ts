import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Agent, Message, MessageRole, Models, Run, RunMode } from '../db/models.js';
import type { Sampling } from '../shared/sampling.js';
import type { OutputFormat } from '../shared/output-schema.js';
import type { ClientTool, RequiredAction } from '../shared/client-tools.js';
import type { DocMode } from '../shared/doc-modes.js';
import type { Citation, FinishReason, Usage } from '../shared/events.js';
import { Superseded } from '../shared/errors.js';
import { runEventPayload } from '../webhooks/outbox.js';
import type { Attachment } from '../shared/attachments.js';
import { ACTIVE_STATUSES, guardedStatuses, HOLDING_STATUSES, TRANSITIONS, WORKING_STATUS, type StoreMethod } from './transitions.js';

export interface NewRun {
  runId: string;
  userId: string;
  conversationId: string;
  agentId: string | null;
  mode: RunMode;
  query: string;
  userMetadata: string | null;
  docMode: DocMode | null;
  /** The images sent with the question. */
  attachments: Attachment[];
  /** Earlier turns a client sent with the question (DESIGN §16), stored before it, oldest first. */
  history?: PriorMessage[];
  /** What an OpenAI-style client asked of the model calls. */
  sampling?: Sampling | null;
  /** The run's OpenTelemetry trace (DESIGN §18); null when tracing is off. */
  traceId?: string | null;
  /** The schedule that starts the run (DESIGN §19). */
  scheduleId?: string | null;
  /** DESIGN §23: what the run's answer must be (its own output schema, or /v1's response_format). */
  outputFormat?: OutputFormat | null;
  /** The question message's id; new if absent. A run written again from its job (`recreate`) passes the one it was first written with. */
  questionId?: string;
  /** Functions the client runs itself (DESIGN §23). */
  clientTools?: ClientTool[] | null;
  /** The eval whose item the run answers (DESIGN §24). */
  evalId?: string | null;
  /** The agent's version the run uses (an eval's); its agent's current version when absent. */
  agentVersion?: number | null;
}

/** A turn of a conversation a client brings along. */
export interface PriorMessage {
  role: MessageRole;
  content: string;
}

/** An earlier message of the run's conversation, oldest first. */
export type HistoryMessage = Pick<Message, 'id' | 'role' | 'content' | 'injected' | 'tokens'>;

/**
 * How much unsummarised history a run reads (DESIGN §20): at most `messages` of the newest, and
 * (counting bytes for messages whose tokens are not known yet) `tokens` or `windows` times its
 * agent's own context_window, whichever is larger. What lies beyond is left out.
 */
export interface HistoryBound {
  messages: number;
  tokens: number;
  windows: number;
}

/** A message's token count, learnt by a worker: saved with the run's next write. */
export interface CountedMessage {
  id: string;
  tokens: number;
}

/** A conversation's summary after a compaction (DESIGN §20), the checkpoint saved with it, and the counts learnt meanwhile. */
export interface Compaction {
  summary: string;
  through: string;
  checkpoint: string;
  counted: CountedMessage[];
}

export interface LoadedRun {
  run: Run;
  /** Its agent as of the version the run started with (`agent_versions`, DESIGN §20), deleted since or not; the live row for a run without a version. */
  agent?: Agent;
  /** The conversation's messages before the run's question and after its summary, oldest first, within the HistoryBound. */
  history: HistoryMessage[];
  /** The conversation's summary (DESIGN §20) and the last message it covers; null before its first compaction. */
  summary: { text: string | null; through: string | null };
  /** The images sent with the run's question. */
  attachments: Attachment[];
}

export interface FailedEnd {
  /** `interrupted`: a newer run stopped it (DESIGN §19); what it had said (`answer`) stays in the conversation. */
  status: 'failed' | 'cancelled' | 'interrupted';
  error: { code: string; message: string } | null;
  usage: Usage;
  durationMs: number;
  /** The model the run called (its agent's, or the worker's default): its price, if any, fixes the run's cost. */
  model: string;
  /** What the model had answered when a spent token budget stopped the run (DESIGN §18), or a newer run interrupted it (§19); kept on the run. */
  answer?: string | null;
  /** multitask_strategy rollback (DESIGN §19): the run's question, injects and any answer leave the conversation. */
  rollback?: boolean;
}

export interface SucceededEnd {
  answer: string;
  /** DESIGN §23: the answer parsed, when the run had an output schema. */
  output?: unknown;
  citations: Citation[];
  finishReason: FinishReason;
  usage: Usage;
  durationMs: number;
  /** The model the run called: its price, if any, fixes the run's cost. */
  model: string;
  /** DESIGN §20: the answer's tokens, and the history's counted by this run, kept for later runs. */
  answerTokens?: number | null;
  counted?: CountedMessage[];
}

/**
 * The webhook outbox: one delivery per active endpoint of the run's owner subscribed to the event,
 * written by the statement that makes the run final (a CTE reading `final`).
 */
const OUTBOX = `outbox as (
         insert into webhook_deliveries (id, endpoint_id, run_id, event, payload)
         select gen_random_uuid(), e.id, final.id, ?, ?::jsonb from final
         join webhook_endpoints e on e.user_id = final.user_id and e.is_active and e.events @> ?::jsonb
         returning id
       )`;
const outboxBindings = (payload: ReturnType<typeof runEventPayload>) => [payload.type, JSON.stringify(payload), JSON.stringify([payload.type])];

/**
 * A final run's cost (DESIGN §18) at its model's price of this moment, in the statement that makes
 * it final; null when the model has no price. Completion tokens already include reasoning tokens
 * (every provider reports them so: workers/models/gateway), so reasoning is not charged twice.
 * Multiplying by 0.000001 rather than dividing keeps the numeric exact.
 */
const COST = `(select (p.input_per_million * ?::numeric + p.output_per_million * ?::numeric) * 0.000001 from model_prices p where p.model = ?)`;
const tokenCount = (n: number) => (Number.isFinite(n) && n > 0 ? Math.trunc(n) : 0);
const costBindings = (end: { usage: Usage; model: string }) => [tokenCount(end.usage.prompt_tokens), tokenCount(end.usage.completion_tokens), end.model];

/** DESIGN §20: token counts a worker learnt (a jsonb array of {id, tokens}), kept on messages of the conversation of `source` that have none. */
const COUNTED = (source: string) => `counted as (
         update messages m set tokens = t.tokens from ${source}, jsonb_to_recordset(?::jsonb) as t(id uuid, tokens int)
         where m.id = t.id and m.conversation_id = ${source}.conversation_id and m.tokens is null
       )`;

/**
 * The columns of a `runs` row a Run holds, named rather than `*`: a prepared statement's result
 * type is fixed when it is planned, so a column added by a later migration must not change it
 * under a running process ("cached plan must not change result type").
 */
const RUN_COLUMNS = ['id', 'user_id', 'conversation_id', 'agent_id', 'agent_version', 'mode', 'status', 'query', 'answer', 'finish_reason', 'user_metadata', 'doc_mode', 'error', 'usage', 'cost', 'sampling', 'output_format', 'output', 'trace_id', 'schedule_id', 'eval_id', 'created_at', 'started_at', 'finished_at', 'checkpoint', 'attempt', 'crashes', 'handed_back', 'client_tools', 'required_action'];
/**
 * A statement's first CTE that lets its commit return before the commit is on disk (SET LOCAL
 * synchronous_commit = off for its own implicit transaction). A later synchronous commit of any
 * session flushes the log past it. Referenced by the statement, or Postgres would not evaluate it.
 */
const ASYNCHRONOUS_COMMIT = `asynchronous_commit as (select set_config('synchronous_commit', 'off', true))`;
/**
 * The status guards of the SQL, from the transition table (transitions.ts): `status ${inStatuses(x)}`
 * with `...x` bound, so a guard cannot drift from the table.
 */
const GUARDS = Object.fromEntries((['failUnqueued', 'claim', 'park', 'succeed', 'fail'] as const).map((method) => [method, guardedStatuses(method)])) as Record<Exclude<StoreMethod, 'create' | 'handBack'>, string[]>;
const inStatuses = (statuses: readonly string[]) => `in (${statuses.map(() => '?').join(', ')})`;
const runColumns = (alias?: string) => RUN_COLUMNS.map((c) => (alias ? `${alias}.${c}` : c)).join(', ');

/** How a worker attempt claims the run as it loads it: its fencing token and BullMQ's count of its worker's deaths. */
export interface AttemptClaim {
  attempt: number;
  crashes: number;
}

export interface RunStoreOptions {
  /**
   * DATABASE_PREPARED_STATEMENTS: the run path's statements are prepared once per connection and
   * reused (Postgres skips parsing and planning them for every run). Off behind a pooler that
   * cannot carry named statements across transactions (PgBouncer before 1.21 in transaction mode).
   */
  preparedStatements: boolean;
}

/** What a fenced write that ends or parks a run answers: whether it found the row, and the webhook deliveries it wrote. */
interface FencedRow {
  updated: number;
  deliveries: string[];
}

/**
 * The one writer of the `runs` row (DESIGN §5): created queued by the web tier; claimed by each
 * worker attempt, whose number fences every later write (a superseded attempt writes nothing);
 * checkpointed, handed back, or finished. One statement per step.
 */
export class RunStore {
  constructor(
    private readonly knex: Knex,
    private readonly models: Models,
    private readonly options: RunStoreOptions = { preparedStatements: true },
  ) {}

  /** One of the run path's statements, by a name of its own: prepared once per connection when DATABASE_PREPARED_STATEMENTS is on. */
  private statement(name: string, sql: string, bindings: readonly Knex.Value[]) {
    const query = this.knex.raw(sql, bindings);
    return this.options.preparedStatements ? query.options({ name: `run_store_${name}` }) : query;
  }

  /**
   * Conversation (created or touched), run and messages in one statement: atomic without a
   * transaction. The history a client brought and the question are one insert, in order (the
   * sub-statements of a WITH run in no set order, so two inserts could number them either way).
   * `asynchronousCommit`: the statement does not wait for its commit to reach the disk (issue 26);
   * only for a run whose job carries everything written here, so a Postgres crash that loses the
   * row loses nothing Redis does not hold: the worker writes it again (`recreate`).
   */
  async create(request: NewRun, { asynchronousCommit = false } = {}): Promise<Run> {
    const [row] = await this.insertRun(request, asynchronousCommit);
    if (row) return this.models.Run.fromDatabaseJson(row);
    // A worker that took the run's job first wrote the row from the job (RunService.createWhileQueueing).
    const written = await this.models.Run.query().findById(request.runId);
    if (!written) throw new Error(`run ${request.runId} could not be written`);
    return written;
  }

  /**
   * A worker's copy of `create` for a run whose job carries its row, when the row is missing (a
   * Postgres crash lost its asynchronous commit): the same rows with the same ids; nothing that
   * exists is touched.
   */
  async recreate(request: NewRun): Promise<void> {
    await this.insertRun(request, false);
  }

  private async insertRun(request: NewRun, asynchronousCommit: boolean): Promise<Record<string, unknown>[]> {
    const question = { id: request.questionId ?? randomUUID(), role: 'user', content: request.query, question: true, ...(request.attachments.length > 0 ? { attachments: request.attachments } : {}) };
    const messages = [...(request.history ?? []).map(({ role, content }) => ({ id: randomUUID(), role, content })), question];
    const { rows } = await this.statement(
      asynchronousCommit ? 'create_async' : 'create',
      `with ${asynchronousCommit ? `${ASYNCHRONOUS_COMMIT}, ` : ''}conversation as (
         insert into conversations (id, user_id, agent_id, title) values (?, ?, ?, ?)
         on conflict (id) do update set updated_at = now()
         returning id, agent_id
       ), run as (
         insert into runs (id, user_id, conversation_id, agent_id, mode, status, query, user_metadata, doc_mode, sampling, trace_id, schedule_id, output_format, client_tools, eval_id, agent_version)
         select ?, ?, conversation.id, coalesce(?::uuid, conversation.agent_id), ?, 'queued', ?, ?, ?, ?::jsonb, ?, ?::uuid, ?::jsonb, ?::jsonb, ?::uuid,
           coalesce(?::int, (select a.version from agents a where a.id = coalesce(?::uuid, conversation.agent_id))) from conversation
         on conflict (id) do nothing
         returning ${runColumns()}
       ), message as (
         insert into messages (id, conversation_id, run_id, role, content, attachments)
         select (m->>'id')::uuid, run.conversation_id, case when (m->>'question')::boolean then run.id end, m->>'role', m->>'content', m->'attachments'
         from run, jsonb_array_elements(?::jsonb) with ordinality as given(m, n)
         order by n
         on conflict (id) do nothing
       )
       select ${runColumns('run')} from run${asynchronousCommit ? ', asynchronous_commit' : ''}`,
      [
        request.conversationId, request.userId, request.agentId, request.query.slice(0, 80),
        request.runId, request.userId, request.agentId, request.mode, request.query, request.userMetadata, request.docMode, request.sampling ? JSON.stringify(request.sampling) : null, request.traceId ?? null, request.scheduleId ?? null, request.outputFormat ? JSON.stringify(request.outputFormat) : null, request.clientTools?.length ? JSON.stringify(request.clientTools) : null, request.evalId ?? null, request.agentVersion ?? null, request.agentId,
        JSON.stringify(messages),
      ],
    );
    return rows;
  }

  /** A run that was stored but could not be queued. */
  async failUnqueued(runId: string): Promise<boolean> {
    const written = await this.knex('runs')
      .update({ status: TRANSITIONS.enqueue_failed.to, error: { code: 'enqueue_failed', message: 'The run could not be queued' }, finished_at: new Date() })
      .where({ id: runId })
      .whereIn('status', GUARDS.failUnqueued);
    return written > 0;
  }

  /**
   * The run with its agent, its question's images, its conversation's summary and the messages
   * between that summary and its question (newest first up to the bound), in one statement. The
   * question of another run still queued is not among them: it moves after this run's answer
   * when its own turn comes (admitQueued).
   * With `claim`, the same statement marks the run running under that attempt (claimAttempt's
   * write) and `claimed` says whether it could; the row read is as it was before the claim.
   */
  async load(runId: string, bound: HistoryBound, claim?: AttemptClaim): Promise<(LoadedRun & { claimed?: boolean }) | undefined> {
    const claiming = claim
      ? `with ${ASYNCHRONOUS_COMMIT}, claimed as (
           update runs set status = ?, started_at = coalesce(started_at, now()), attempt = ?, crashes = ?, handed_back = false, required_action = null
           where id = ? and status ${inStatuses(GUARDS.claim)} and attempt < ? returning id
         )
         `
      : '';
    const { rows } = await this.statement(
      claim ? 'load_and_claim' : 'load',
      `${claiming}select ${runColumns('r')},${claim ? ' exists (select 1 from claimed, asynchronous_commit) as run_claimed,' : ''}
         (select to_jsonb(a) || coalesce((select v.config || jsonb_build_object('version', v.version) from agent_versions v where v.agent_id = a.id and v.version = r.agent_version), '{}') from agents a where a.id = r.agent_id) as run_agent,
         q.attachments as run_attachments,
         c.summary as run_summary, c.summary_through as run_summary_through,
         (select coalesce(jsonb_agg(jsonb_build_object('id', h.id, 'role', h.role, 'content', h.content, 'injected', h.injected, 'tokens', h.tokens) order by h.seq), '[]')
            from (select w.* from (
                    select m.id, m.role, m.content, m.injected, m.tokens, m.seq, sum(coalesce(m.tokens, octet_length(m.content))) over (order by m.seq desc) as upto
                    from messages m
                    where m.conversation_id = r.conversation_id and m.seq < q.seq
                      and not exists (select 1 from runs w where w.id = m.run_id and w.id <> r.id and w.status = 'queued' and m.role = 'user' and not m.injected)
                      and m.seq > coalesce((select s.seq from messages s where s.id = c.summary_through), 0)
                    order by m.seq desc limit ?) w
                  where w.upto - coalesce(w.tokens, octet_length(w.content)) < greatest(?, ? * coalesce((select b.context_window from agents b where b.id = r.agent_id), 0))) h) as run_history
       from runs r
       left join conversations c on c.id = r.conversation_id
       left join lateral (select q.seq, q.attachments from messages q where q.run_id = r.id and q.role = 'user' and not q.injected limit 1) q on true
       where r.id = ?`,
      [...(claim ? [TRANSITIONS.started.to, claim.attempt, claim.crashes, runId, ...GUARDS.claim, claim.attempt] : []), bound.messages, bound.tokens, bound.windows, runId],
    );
    const row = rows[0];
    if (!row) return undefined;
    const { run_agent: agent, run_history: history, run_attachments: attachments, run_summary: summary, run_summary_through: through, run_claimed: claimed, ...run } = row;
    return {
      ...(claim ? { claimed: claimed === true } : {}),
      run: this.models.Run.fromDatabaseJson(run),
      agent: agent ? this.models.Agent.fromDatabaseJson(agent) : undefined,
      history,
      summary: { text: summary ?? null, through: through ?? null },
      attachments: attachments ?? [],
    };
  }

  /**
   * The run as its claim will leave it, from what its job carries, for a run that opens its
   * conversation without an agent: nothing to read (no history, summary, agent or images), so its
   * worker starts at once while `load` claims it beside (issue 36).
   */
  assumeClaimed(run: NewRun, claim: AttemptClaim): LoadedRun {
    const now = new Date();
    const row: Record<string, unknown> = Object.fromEntries(RUN_COLUMNS.map((c) => [c, null]));
    Object.assign(row, {
      id: run.runId, user_id: run.userId, conversation_id: run.conversationId, agent_id: run.agentId, mode: run.mode, status: TRANSITIONS.started.to,
      query: run.query, user_metadata: run.userMetadata, doc_mode: run.docMode, sampling: run.sampling ?? null, output_format: run.outputFormat ?? null,
      trace_id: run.traceId ?? null, schedule_id: run.scheduleId ?? null, eval_id: run.evalId ?? null, created_at: now, started_at: now, attempt: claim.attempt, crashes: claim.crashes,
      handed_back: false, client_tools: run.clientTools ?? null,
    });
    return { run: this.models.Run.fromDatabaseJson(row), agent: undefined, history: [], summary: { text: null, through: null }, attachments: [] };
  }

  /**
   * A compaction (DESIGN §20): the conversation's new summary and the run's checkpoint after its
   * `compaction` event, in one statement fenced by the attempt, so a resumed run finds both or
   * neither; the token counts learnt on the way are kept too.
   */
  async compact(run: Run, compaction: Compaction): Promise<void> {
    await this.asAttempt(run.id, run.attempt, () => this.knex.raw(
      `with fence as (
         update runs set checkpoint = ?::jsonb where id = ? and attempt = ? and status = ? returning conversation_id
       ), summary as (
         update conversations c set summary = ?, summary_through = ? from fence where c.id = fence.conversation_id
       ), ${COUNTED('fence')}
       select (select count(*) from fence)::int as updated`,
      [compaction.checkpoint, run.id, run.attempt, WORKING_STATUS, compaction.summary, compaction.through, JSON.stringify(compaction.counted)],
    ));
  }

  /**
   * Marks the run running under `attempt`, the fencing token of every later write. Attempts only
   * grow (BullMQ counts them), so an older attempt's late claim changes nothing. False when the run
   * is final or a newer attempt has it. Without `crashes` the count stays as it is (a claim made again).
   */
  async claimAttempt(runId: string, attempt: number, crashes?: number): Promise<boolean> {
    const updated = await this.knex('runs')
      .update({ status: TRANSITIONS.started.to, started_at: this.knex.raw('coalesce(started_at, now())'), attempt, ...(crashes === undefined ? {} : { crashes }), handed_back: false, required_action: null })
      .where({ id: runId })
      .whereIn('status', GUARDS.claim)
      .where('attempt', '<', attempt);
    return updated > 0;
  }

  /** Saves the loop's state; only the attempt that owns the run may. */
  async saveCheckpoint(runId: string, attempt: number, checkpoint: string): Promise<void> {
    await this.fenced(runId, attempt, { checkpoint });
  }

  /** The run goes back to the queue unfinished (shutdown or outage); its next attempt is not a crash. */
  async handBack(runId: string, attempt: number): Promise<void> {
    await this.fenced(runId, attempt, { handed_back: true });
  }

  /**
   * The answer message, the final row and the webhook outbox (a delivery per subscribed endpoint)
   * in one statement: a finished run always has its deliveries. The answer's message id and the deliveries.
   */
  async succeed(run: Run, end: SucceededEnd): Promise<{ messageId: string; deliveries: string[] }> {
    const messageId = randomUUID();
    const payload = runEventPayload('run.succeeded', run, { status: 'succeeded', answer: end.answer, finishReason: end.finishReason, error: null, usage: end.usage, durationMs: end.durationMs });
    const row = await this.asAttempt<FencedRow>(run.id, run.attempt, () => this.statement(
      'succeed',
      `with final as (
         update runs set status = ?, answer = ?, output = ?::jsonb, finish_reason = ?, usage = ?::jsonb, cost = ${COST}, finished_at = now()
         where id = ? and attempt = ? and status ${inStatuses(GUARDS.succeed)} returning id, user_id, conversation_id
       ), answer as (
         insert into messages (id, conversation_id, run_id, role, content, citations, tokens)
         select ?, conversation_id, id, 'assistant', ?, ?::jsonb, ?::int from final
       ), ${COUNTED('final')}, ${OUTBOX}
       select (select count(*) from final)::int as updated, coalesce((select array_agg(id) from outbox), '{}') as deliveries`,
      [TRANSITIONS.succeeded.to, end.answer, end.output === undefined ? null : JSON.stringify(end.output), end.finishReason, JSON.stringify(end.usage), ...costBindings(end), run.id, run.attempt, ...GUARDS.succeed, messageId, end.answer, JSON.stringify(end.citations), end.answerTokens ?? null, JSON.stringify(end.counted ?? []), ...outboxBindings(payload)],
    ));
    return { messageId, deliveries: row.deliveries };
  }

  /**
   * The final row of a failed, cancelled or interrupted run and its webhook outbox, in one statement;
   * an interrupted run's words become its assistant message, a rolled-back run's messages go.
   */
  async fail(run: Run, end: FailedEnd): Promise<{ deliveries: string[] }> {
    const answer = end.answer || null;
    const said = end.status === 'interrupted' ? answer : null;
    const payload = runEventPayload(`run.${end.status}`, run, { status: end.status, answer, finishReason: null, error: end.error, usage: end.usage, durationMs: end.durationMs });
    const row = await this.asAttempt<FencedRow>(run.id, run.attempt, () => this.statement(
      'fail',
      `with final as (
         update runs set status = ?, error = ?::jsonb, usage = ?::jsonb, answer = ?, cost = ${COST}, finished_at = now()
         where id = ? and attempt = ? and status ${inStatuses(GUARDS.fail)} returning id, user_id, conversation_id
       ), said as (
         insert into messages (id, conversation_id, run_id, role, content)
         select gen_random_uuid(), conversation_id, id, 'assistant', ?::text from final where ?::text is not null
       ), rolled_back as (
         delete from messages where ?::boolean and run_id = (select id from final)
       ), ${OUTBOX}
       select (select count(*) from final)::int as updated, coalesce((select array_agg(id) from outbox), '{}') as deliveries`,
      [end.status, JSON.stringify(end.error), JSON.stringify(end.usage), answer, ...costBindings(end), run.id, run.attempt, ...GUARDS.fail, said, said, end.rollback === true, ...outboxBindings(payload)],
    ));
    return { deliveries: row.deliveries };
  }

  /**
   * The run waits for a person's approval (DESIGN §11), or — with `requiredAction` — for its
   * client's tool outputs (DESIGN §23, `requires_action`): its row parked with the checkpoint it
   * resumes from (and the calls the client must answer), and the run.waiting or
   * run.requires_action webhook outbox, in one statement. Only the attempt that owns the run may.
   */
  async park(run: Run, progress: { usage: Usage; activeMs: number; checkpoint: string; requiredAction?: RequiredAction | null }): Promise<{ deliveries: string[] }> {
    const status = progress.requiredAction ? TRANSITIONS.parked_for_client_tools.to : TRANSITIONS.parked_for_approval.to;
    const payload = runEventPayload(`run.${status}`, run, { status, answer: null, finishReason: null, error: null, usage: progress.usage, durationMs: progress.activeMs });
    const row = await this.asAttempt<FencedRow>(run.id, run.attempt, () => this.knex.raw(
      `with final as (
         update runs set status = ?, usage = ?::jsonb, checkpoint = ?::jsonb, required_action = ?::jsonb
         where id = ? and attempt = ? and status ${inStatuses(GUARDS.park)} returning id, user_id
       ), ${OUTBOX}
       select (select count(*) from final)::int as updated, coalesce((select array_agg(id) from outbox), '{}') as deliveries`,
      [status, JSON.stringify(progress.usage), progress.checkpoint, progress.requiredAction ? JSON.stringify(progress.requiredAction) : null, run.id, run.attempt, ...GUARDS.park, ...outboxBindings(payload)],
    ));
    return { deliveries: row.deliveries };
  }

  /**
   * A run queued behind others (DESIGN §19), once it may start: false while another run of its
   * conversation is still running (its worker died between handing the conversation over and
   * recording its end: it is being resumed). Otherwise, on its first start, its question moves to
   * the end of the conversation, after what the runs before it said. One statement.
   */
  async admitQueued(runId: string, conversationId: string): Promise<boolean> {
    const { rows } = await this.knex.raw(
      `with blocking as (
         select 1 from runs where conversation_id = ? and id <> ? and status ${inStatuses(HOLDING_STATUSES)} limit 1
       ), moved as (
         update messages set seq = default
         where run_id = ? and role = 'user' and not injected and not exists (select 1 from blocking)
           and exists (select 1 from runs where id = ? and status ${inStatuses(TRANSITIONS.started.from)})
       )
       select not exists (select 1 from blocking) as admitted`,
      [conversationId, runId, ...HOLDING_STATUSES, runId, runId, ...TRANSITIONS.started.from],
    );
    return rows[0].admitted === true;
  }

  /** A user's runs that may still change (queued, running or parked), on the partial index of active runs. */
  async activeRunsOf(userId: string): Promise<Run[]> {
    return this.models.Run.query().select('id', 'conversation_id', 'user_id', 'status').where('user_id', userId).whereIn('status', ACTIVE_STATUSES);
  }

  async countActiveRunsOf(userId: string): Promise<number> {
    return this.models.Run.query().where('user_id', userId).whereIn('status', ACTIVE_STATUSES).resultSize();
  }

  /** A succeeded run's answer message (to publish its end again). */
  async answerOf(run: Run): Promise<Message | undefined> {
    return run.status === 'succeeded' ? this.models.Message.query().findOne({ run_id: run.id, role: 'assistant' }) : undefined;
  }

  /** The attempt fence: a write only the attempt that owns the run may make. */
  private async fenced(runId: string, attempt: number, patch: Record<string, unknown>): Promise<void> {
    await this.asAttempt(runId, attempt, async () => ({ rows: [{ updated: await this.knex('runs').update(patch).where({ id: runId, attempt }) }] }));
  }

  /**
   * A write fenced by the attempt (`write` answers `updated`: 0 when the row is not this
   * attempt's). The claim was committed asynchronously (`load`), so a Postgres crash may have
   * lost it while the attempt went on: then no newer attempt has the run, and the attempt claims
   * it again (synchronously) and writes once more. Otherwise a newer attempt owns the run: Superseded.
   */
  private async asAttempt<Row extends { updated: number }>(runId: string, attempt: number, write: () => PromiseLike<{ rows: Row[] }>): Promise<Row> {
    const first = (await write()).rows[0]!;
    if (first.updated > 0) return first;
    if (await this.claimAttempt(runId, attempt)) {
      const again = (await write()).rows[0]!;
      if (again.updated > 0) return again;
    }
    throw new Superseded();
  }
}
