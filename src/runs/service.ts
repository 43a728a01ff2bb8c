import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Queue } from 'bullmq';
import type { Models, RunMode, Run, Conversation } from '../db/models.js';
import { ConflictError, GoneError, NotFoundError, RateLimitedError } from '../http/errors.js';
import type { EventPublisher } from '../shared/publisher.js';
import { ACTIVE_MARKER_TTL_SECONDS, type InjectPayload, type RedisKeys, type ScriptedRedis } from '../shared/redis-keys.js';
import { runJobOptions, type RunJob } from '../shared/jobs.js';

/** When a user at the active-run cap may try again: runs usually finish within seconds. */
const RUN_LIMIT_RETRY_SECONDS = 5;

export interface StartRequest {
  userId: string;
  mode: RunMode;
  query: string;
  conversationId?: string | null;
  agentId?: string | null;
}

/** The web side of a run (DESIGN §5 step 1 and inject): persist, claim the conversation, enqueue. */
export class RunService {
  constructor(
    private readonly knex: Knex,
    private readonly models: Models,
    private readonly redis: ScriptedRedis,
    private readonly keys: RedisKeys,
    private readonly queue: Queue<RunJob>,
    private readonly publisher: EventPublisher,
    private readonly limits: { perUser: number },
  ) {}

  async start(request: StartRequest): Promise<Run> {
    const { userId } = request;
    const agentId = request.agentId ?? null;
    if (agentId && !(await this.models.Agent.query().findOne({ id: agentId, user_id: userId }))) {
      throw new NotFoundError('Agent not found');
    }
    const existing = request.conversationId ? await this.ownConversation(userId, request.conversationId) : undefined;
    const conversationId = existing?.id ?? randomUUID();
    const runId = randomUUID();
    const announced = { run_id: runId, conversation_id: conversationId, agent_id: agentId ?? existing?.agent_id ?? null, mode: request.mode, status: 'queued' as const };
    const claim = await this.publisher.claimAndAnnounce(userId, announced, this.limits.perUser);
    if (claim === 'busy') throw new ConflictError('conversation_busy', 'This conversation already has an active run; inject into it instead');
    if (claim === 'limit') {
      throw new RateLimitedError(`You already have ${this.limits.perUser} active runs; wait for one to finish`, RUN_LIMIT_RETRY_SECONDS);
    }
    try {
      const run = await this.insertRun(request, runId, conversationId);
      await this.queue.add('run', { runId }, { ...runJobOptions, jobId: runId });
      return run;
    } catch (err) {
      await this.release(userId, conversationId, runId).catch(() => {});
      await this.models.Run.query().patch({ status: 'failed', error: { code: 'enqueue_failed', message: 'The run could not be queued' }, finished_at: new Date() }).where({ id: runId }).catch(() => {});
      throw err;
    }
  }

  /**
   * Conversation (created or touched), run and user message in one statement: one round trip,
   * atomic without a transaction. Ownership of an existing conversation was checked before.
   */
  private async insertRun(request: StartRequest, runId: string, conversationId: string): Promise<Run> {
    const { rows } = await this.knex.raw(
      `with conversation as (
         insert into conversations (id, user_id, agent_id, title) values (?, ?, ?, ?)
         on conflict (id) do update set updated_at = now()
         returning id, agent_id
       ), run as (
         insert into runs (id, user_id, conversation_id, agent_id, mode, status, query)
         select ?, ?, conversation.id, coalesce(?::uuid, conversation.agent_id), ?, 'queued', ? from conversation
         returning *
       ), message as (
         insert into messages (id, conversation_id, run_id, role, content)
         select ?, run.conversation_id, run.id, 'user', run.query from run
       )
       select * from run`,
      [
        conversationId, request.userId, request.agentId ?? null, request.query.slice(0, 80),
        runId, request.userId, request.agentId ?? null, request.mode, request.query,
        randomUUID(),
      ],
    );
    return this.models.Run.fromDatabaseJson(rows[0]);
  }

  /**
   * Persists and queues an injected message while the conversation has an active run; otherwise
   * 409 and nothing is stored (the transaction rolls back). The check-and-push is one Lua step.
   */
  async inject(userId: string, conversationId: string, content: string): Promise<void> {
    await this.ownConversation(userId, conversationId);
    const payload: InjectPayload = { message_id: randomUUID(), content };
    await this.knex.transaction(async (trx) => {
      await this.models.Message.query(trx).insert({ id: payload.message_id, conversation_id: conversationId, role: 'user', content, injected: true });
      const runId = await this.redis.injectIfActive(
        this.keys.conversationActive(conversationId),
        this.keys.conversationInjects(conversationId),
        JSON.stringify(payload),
        ACTIVE_MARKER_TTL_SECONDS,
      );
      if (!runId) throw new ConflictError('no_active_execution', 'The conversation has no active execution to inject into');
      await this.models.Message.query(trx).patch({ run_id: String(runId) }).where({ id: payload.message_id });
    });
  }

  /** Undoes a claim whose run could not be stored or queued. */
  private async release(userId: string, conversationId: string, runId: string): Promise<void> {
    await this.redis.finishRun(
      this.keys.conversationInjects(conversationId),
      this.keys.conversationActive(conversationId),
      this.keys.runCancel(runId),
      this.keys.userActiveRuns(userId),
      runId,
      0,
    );
    await this.redis.del(this.keys.runEvents(runId));
  }

  async ownRun(userId: string, runId: string): Promise<Run> {
    const run = await this.models.Run.query().findOne({ id: runId, user_id: userId });
    if (!run) throw new NotFoundError('Run not found');
    return run;
  }

  /**
   * Accepts a cancel while the run is queued or running (any web process, any worker: the flag
   * and the doorbell are in Redis); a finished run → 409.
   */
  async cancel(userId: string, runId: string): Promise<Run> {
    const run = await this.ownRun(userId, runId);
    const accepted = !run.isFinal && (await this.redis.requestCancel(
      this.keys.conversationActive(run.conversation_id),
      this.keys.runCancel(run.id),
      run.id,
      this.keys.cancelChannel,
      ACTIVE_MARKER_TTL_SECONDS,
    ));
    if (!accepted) throw new ConflictError('no_active_execution', `The run has already finished (${run.status}); there is nothing to cancel`);
    return run;
  }

  /** The run, if its event stream can still be joined; 410 once a finished run's stream has expired. */
  async joinableRun(userId: string, runId: string): Promise<Run> {
    const run = await this.ownRun(userId, runId);
    if (run.isFinal && !(await this.redis.exists(this.keys.runEvents(run.id)))) {
      throw new GoneError(`The run's event stream has expired; GET /api/runs/${run.id} holds its result`);
    }
    return run;
  }

  async ownConversation(userId: string, conversationId: string): Promise<Conversation> {
    const conversation = await this.models.Conversation.query().findOne({ id: conversationId, user_id: userId });
    if (!conversation) throw new NotFoundError('Conversation not found');
    return conversation;
  }
}
