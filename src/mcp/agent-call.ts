import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { Run } from '../db/models.js';
import type { BudgetRef } from '../budgets/ledger.js';
import type { RunService } from '../runs/service.js';
import { runRef } from '../runs/service.js';
import type { EventRelay } from '../runs/relay.js';
import { followRun, RunTally } from '../runs/follow.js';
import { AppError, ConflictError, NotFoundError, RateLimitedError } from '../shared/errors.js';
import { runLogFields } from '../logger.js';
import type { AgentCallArguments } from './call-arguments.js';
import type { CallerRef, InFlightCalls } from './in-flight-calls.js';
import { ProgressReporter, type ProgressThrottle, type ProgressUpdate } from './progress.js';

export const toolError = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/** What one `tools/call` request brings besides its arguments. */
export interface CallContext {
  caller: CallerRef;
  /** The token budgets of the caller's credential (DESIGN §18). */
  budgets: readonly BudgetRef[];
  /** The JSON-RPC request id: how the client's `notifications/cancelled` names this call. */
  requestId: string | number;
  /** Set when the client asked for progress (`_meta.progressToken`). */
  progress?: (update: ProgressUpdate) => Promise<void>;
  /** Aborts when the client's connection closed before the result: the run is cancelled. */
  disconnected: AbortSignal;
  /** Aborts when nothing can be answered any more (the server was closed): following stops. */
  stop: AbortSignal;
  /** The HTTP request's id, for the run's log lines. */
  httpRequestId: string;
  log: Logger;
}

/** Why a run could not start, as the tool's error text; undefined for errors that are not the caller's (rethrown). */
function startRefusal(err: unknown): string | undefined {
  if (err instanceof ConflictError && err.code === 'conversation_busy') {
    return 'The conversation is busy: it already has an active run. Wait for it to finish, or call without conversation_id to start a new conversation.';
  }
  if (err instanceof NotFoundError || err instanceof RateLimitedError) return err.message;
  if (err instanceof AppError && err.status < 500) return err.message;
  return undefined;
}

/**
 * Runs an agent as one MCP tool call (DESIGN §16): a ReAct run through RunService.start (the same
 * queue, limits, webhooks and admin views as POST /api/react), followed to its end, answered as a
 * tool result; progress on the way; a cancel from the client, or its leaving, cancels the run.
 */
export class AgentCaller {
  constructor(
    private readonly runs: Pick<RunService, 'start' | 'cancel'>,
    private readonly relay: EventRelay,
    private readonly calls: InFlightCalls,
    private readonly throttle?: ProgressThrottle,
  ) {}

  async call(agentId: string, args: AgentCallArguments, context: CallContext): Promise<CallToolResult> {
    const { caller } = context;
    const registered = await this.calls.begin(caller, context.requestId);
    try {
      let run: Run;
      try {
        run = await this.runs.start({ userId: caller.userId, mode: 'react', query: args.q, conversationId: args.conversationId, agentId, requestId: context.httpRequestId, budgets: context.budgets });
      } catch (err) {
        const refusal = startRefusal(err);
        if (refusal === undefined) throw err;
        return toolError(refusal);
      }
      const log = context.log.child(runLogFields(run));
      const cancel = () => this.cancel(caller.userId, run, log);
      const cancelledEarly = await registered.attach(run.id);
      if (cancelledEarly || context.disconnected.aborted) await cancel();
      else context.disconnected.addEventListener('abort', () => void cancel(), { once: true });
      return await this.follow(run, context);
    } finally {
      await registered.end().catch((err: unknown) => context.log.warn({ err }, 'could not forget an MCP call'));
    }
  }

  private async follow(run: Run, context: CallContext): Promise<CallToolResult> {
    const tally = new RunTally();
    const reporter = context.progress ? new ProgressReporter(context.progress, this.throttle) : undefined;
    const stop = AbortSignal.any([context.stop, context.disconnected]);
    for await (const event of followRun(this.relay, runRef(run), stop)) {
      tally.observe(event);
      await reporter?.observe(tally).catch((err: unknown) => context.log.debug({ err }, 'could not send MCP progress'));
    }
    const structured = { answer: tally.answer, run_id: run.id, conversation_id: run.conversation_id, status: tally.status ?? 'cancelled' };
    if (tally.status === 'succeeded') return { content: [{ type: 'text', text: tally.answer }], structuredContent: structured };
    // No `done`: the client left (nobody reads this), or the server is closing.
    const text =
      tally.status === 'failed'
        ? `The run failed: ${tally.error?.message ?? 'unknown error'}${tally.error ? ` (${tally.error.code})` : ''}`
        : tally.status === 'cancelled' || tally.status === 'interrupted'
          ? `The run was ${tally.status}.`
          : 'The call ended before the run did.';
    return { ...toolError(`${text} Run ${run.id}.`), structuredContent: { ...structured, answer: '' } };
  }

  private async cancel(userId: string, run: Run, log: Logger): Promise<void> {
    try {
      await this.runs.cancel(userId, run.id);
      log.info('MCP call cancelled: run cancelled');
    } catch (err) {
      // Already over (409) or gone: nothing to cancel.
      if (err instanceof AppError && err.status < 500) return;
      log.warn({ err }, 'could not cancel the run of an MCP call');
    }
  }
}
