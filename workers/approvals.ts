import type { ApprovalDecision, RunLease, RunRef } from '../src/shared/run-lease.js';
import { needsApproval, type ToolApproval } from '../src/shared/tools.js';
import type { ToolCall } from './models/types.js';
import { MAIN_SCOPE } from './run-events.js';
import { AwaitingApproval, RunFailure } from './run-control.js';

/** How long approvals are kept past their deadline (a late resume still reads them). */
const KEEP_AFTER_DEADLINE_SECONDS = 3600;

/** A gated call, under the id a person approves it by: the model's own id, or `<node>/<id>` inside a DAG node (ids repeat across nodes). */
export interface GatedCall {
  approvalId: string;
  call: ToolCall;
}

/**
 * Tool approval for one run attempt (DESIGN §11): which calls wait for a person, and their
 * decisions. Asking is idempotent (a resumed attempt asks again for the same calls and gets the
 * decisions made meanwhile); a call still undecided past the deadline ends the run.
 */
export class ToolApprovals {
  constructor(
    private readonly lease: RunLease,
    private readonly ref: RunRef,
    private readonly owner: string,
    private readonly rule: ToolApproval,
    private readonly timeoutMs: number,
  ) {}

  gated(calls: ToolCall[], scope: string): GatedCall[] {
    const prefix = scope === MAIN_SCOPE ? '' : `${scope.replace(/^node:/, '')}/`;
    return calls.filter((call) => needsApproval(this.rule, call.name)).map((call) => ({ approvalId: `${prefix}${call.id}`, call }));
  }

  /**
   * The decisions on these calls, every one made; otherwise `announce` is told of the calls still
   * waiting and AwaitingApproval is thrown (the loop checkpoints and the run parks).
   */
  async decisions(gated: GatedCall[], announce: (waiting: GatedCall[]) => Promise<void>): Promise<Map<string, ApprovalDecision>> {
    if (gated.length === 0) return new Map();
    const ttlSeconds = Math.ceil(this.timeoutMs / 1000) + KEEP_AFTER_DEADLINE_SECONDS;
    const { deadlineMs, decisions } = await this.lease.requestApprovals(this.ref, this.owner, gated.map((g) => g.approvalId), Date.now() + this.timeoutMs, ttlSeconds);
    const waiting = gated.filter((_, i) => decisions[i] === undefined);
    if (waiting.length === 0) return new Map(gated.map((g, i) => [g.approvalId, decisions[i]!]));
    if (Date.now() >= deadlineMs) {
      throw new RunFailure('approval_timeout', `No decision on ${waiting.map((g) => g.approvalId).join(', ')} within APPROVAL_TIMEOUT_S (${this.timeoutMs / 1000} s)`);
    }
    await announce(waiting);
    throw new AwaitingApproval(deadlineMs);
  }
}
