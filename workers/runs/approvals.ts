import type { ApprovalDecision, RunRef } from '../../src/engine/worker-engine.js';
import { clientCallId, type ClientToolCall } from '../../src/shared/client-tools.js';
import { needsApproval, type ToolApproval } from '../../src/shared/tools.js';
import type { ToolCall } from '../models/types.js';
import { MAIN_SCOPE } from './run-events.js';
import { AwaitingApproval, RunFailure } from './run-control.js';

/** How long approvals are kept past their deadline (a late resume still reads them). */
const KEEP_AFTER_DEADLINE_SECONDS = 3600;

/** A gated call, under the id a person approves it by: the model's own id, or `<node>/<id>` inside a DAG node (ids repeat across nodes). */
export interface GatedCall {
  approvalId: string;
  call: ToolCall;
}

/** A call of a client tool (DESIGN §23): the client answers it by `clientId`, derived from the run and its approval id. */
export interface ClientCall extends GatedCall {
  clientId: string;
}

export interface WaitTimeouts {
  /** APPROVAL_TIMEOUT_S */
  approvalMs: number;
  /** CLIENT_TOOL_TIMEOUT_S */
  clientMs: number;
}

/**
 * The run engine's record of calls that wait for an answer (WorkerEngine.requestApprovals): registers
 * them (fenced by `owner`), keeping answers already given, and reads each one's answer (undefined while
 * it waits), deadline, and whether it expired.
 */
export interface ApprovalRequests {
  requestApprovals(run: RunRef, owner: string, callIds: string[], deadlineMs: number, ttlSeconds: number, kind: 'approval' | 'client', nowMs: number): Promise<{ answers: (unknown | undefined)[]; deadlines: number[]; expired: boolean[] }>;
}

/**
 * What the calls of one run attempt wait on (DESIGN §11, §23): a person's decision on calls the
 * agent gates, and the client's output of calls of its client tools. Asking is idempotent (a
 * resumed attempt asks again for the same calls and gets the answers given meanwhile); a call
 * still unanswered past its deadline ends the run.
 */
export class ToolApprovals {
  constructor(
    private readonly requests: ApprovalRequests,
    private readonly ref: RunRef,
    private readonly owner: string,
    private readonly rule: ToolApproval,
    private readonly timeouts: WaitTimeouts,
    private readonly clientTools: ReadonlySet<string> = new Set(),
  ) {}

  gated(calls: ToolCall[], scope: string): GatedCall[] {
    return calls.filter((call) => !this.clientTools.has(call.name) && needsApproval(this.rule, call.name)).map((call) => ({ approvalId: runCallId(call, scope), call }));
  }

  /** The calls the client runs, under the ids it answers them by. */
  clientCalls(calls: ToolCall[], scope: string): ClientCall[] {
    return calls.filter((call) => this.clientTools.has(call.name)).map((call) => {
      const approvalId = runCallId(call, scope);
      return { approvalId, clientId: clientCallId(this.ref.id, approvalId), call };
    });
  }

  /**
   * The decisions on these calls, every one made; otherwise `announce` is told of the calls still
   * waiting and AwaitingApproval is thrown (the loop checkpoints and the run parks).
   */
  async decisions(gated: GatedCall[], announce: (waiting: GatedCall[]) => Promise<void>): Promise<Map<string, ApprovalDecision>> {
    const answers = await this.answers(gated.map((g) => g.approvalId), 'approval', async (waiting) => announce(gated.filter((g) => waiting.has(g.approvalId))), (ids) =>
      new RunFailure('approval_timeout', `No decision on ${ids.join(', ')} within APPROVAL_TIMEOUT_S (${this.timeouts.approvalMs / 1000} s)`));
    return new Map(gated.map((g) => [g.approvalId, answers.get(g.approvalId) as ApprovalDecision]));
  }

  /**
   * The client's outputs of these calls (by approval id), every one given; otherwise `announce` is
   * told of the calls still waiting and AwaitingApproval is thrown carrying them (the run parks as
   * `requires_action`).
   */
  async outputs(calls: ClientCall[], announce: (waiting: ClientCall[]) => Promise<void>): Promise<Map<string, string>> {
    const answers = await this.answers(calls.map((c) => c.clientId), 'client', async (waiting) => announce(calls.filter((c) => waiting.has(c.clientId))), (ids) =>
      new RunFailure('client_tool_timeout', `No output for the client tool call${ids.length === 1 ? '' : 's'} ${ids.join(', ')} within CLIENT_TOOL_TIMEOUT_S (${this.timeouts.clientMs / 1000} s)`), (waiting) =>
      calls.filter((c) => waiting.has(c.clientId)).map((c): ClientToolCall => ({ id: c.clientId, name: c.call.name, arguments: c.call.arguments })));
    return new Map(calls.map((c) => [c.approvalId, (answers.get(c.clientId) as { output: string }).output]));
  }

  private async answers(
    ids: string[],
    kind: 'approval' | 'client',
    announce: (waiting: Set<string>) => Promise<void>,
    timedOut: (ids: string[]) => RunFailure,
    required: (waiting: Set<string>) => ClientToolCall[] = () => [],
  ): Promise<Map<string, unknown>> {
    if (ids.length === 0) return new Map();
    const timeoutMs = kind === 'client' ? this.timeouts.clientMs : this.timeouts.approvalMs;
    const ttlSeconds = Math.ceil(Math.max(this.timeouts.approvalMs, this.timeouts.clientMs) / 1000) + KEEP_AFTER_DEADLINE_SECONDS;
    const now = Date.now();
    const { answers, deadlines, expired } = await this.requests.requestApprovals(this.ref, this.owner, ids, now + timeoutMs, ttlSeconds, kind, now);
    const waitingIds = ids.filter((_, i) => answers[i] === undefined);
    if (waitingIds.length === 0) return new Map(ids.map((id, i) => [id, answers[i]]));
    // Expired in the same step as the read (requestApprovals-2.lua): an answer arriving now is refused, not accepted and ignored.
    if (expired.some(Boolean)) throw timedOut(waitingIds);
    const deadlineMs = Math.min(...ids.flatMap((_, i) => (answers[i] === undefined ? [deadlines[i]!] : [])));
    const waiting = new Set(waitingIds);
    await announce(waiting);
    throw new AwaitingApproval(deadlineMs, undefined, required(waiting));
  }
}

/** A call's id within its run: its model's id, under its DAG node's name outside the main scope (approvals and tool-call keys use it). */
export const runCallId = (call: ToolCall, scope: string) => `${scope === MAIN_SCOPE ? '' : `${scope.replace(/^node:/, '')}/`}${call.id}`;
