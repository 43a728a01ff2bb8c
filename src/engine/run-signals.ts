import type { InjectPayload } from '../shared/redis-keys.js';
import { stopKindOf, type StopKind } from '../shared/multitask.js';
import type { ApprovalAnswers, ApprovalDecision, RunRef } from './protocol-types.js';
import { callScript, ProtocolPart } from './run-scripts.js';
import { decodeOutcome } from './script-outcomes.js';

/**
 * What the world tells a run, and how a run waits for it: the web queues injects, accepts
 * cancels, records a person's decisions and a client's tool outputs; the worker reads why a run
 * was stopped, registers the calls that wait for an answer and parks the run on them. Whether a
 * parked run must wake is parkRun-6.lua's one rule, read by both.
 */
export class RunSignals extends ProtocolPart {
  /** Web: queues an inject while the conversation has an active run; that run's id, or null (nothing queued). */
  async inject(userId: string, conversationId: string, payload: InjectPayload): Promise<string | null> {
    const runId = await callScript(() => this.redis.injectIfActive(
      this.keys.conversationActive(userId, conversationId),
      this.keys.conversationInjects(userId, conversationId),
      JSON.stringify(payload),
      this.options.markerTtlSeconds,
    ));
    return runId === null ? null : String(runId);
  }

  /**
   * Web: accepts a cancel while the run holds its conversation (`active`) or waits behind another
   * (`dequeued`: it leaves the queue, and its job must be woken to end it), and tells every worker;
   * false when it is neither.
   */
  async cancel(run: RunRef): Promise<'active' | 'dequeued' | false> {
    const k = this.keysOf(run);
    const accepted = await callScript(() => this.redis.requestCancel(k.active, k.cancel, k.queue, run.id, this.keys.cancelChannel, this.options.markerTtlSeconds));
    const outcome = decodeOutcome('requestCancel', accepted);
    return outcome === 'refused' ? false : outcome;
  }

  /** Worker: why a cancelled run was told to stop (a person's cancel, or a newer run's interrupt or rollback). */
  async stopKind(run: RunRef): Promise<StopKind> {
    return stopKindOf(await this.redis.get(this.keysOf(run).cancel)) ?? 'cancel';
  }

  /**
   * Worker: registers calls that wait for an answer — a person's approval, or (`client`) the
   * client's output of a client tool call (DESIGN §23) — keeping answers already given, and reads
   * them: each call's answer (undefined while it waits), deadline (set when first asked for), and
   * whether it expired (still unanswered at its deadline by `nowMs`: from then on no answer is taken).
   */
  async requestApprovals(run: RunRef, owner: string, callIds: string[], deadlineMs: number, ttlSeconds: number, kind: 'approval' | 'client' = 'approval', nowMs = Date.now()): Promise<ApprovalAnswers> {
    const k = this.keysOf(run);
    const replies = await callScript(() => this.redis.requestApprovals(k.sequence, k.approvals, owner, ttlSeconds, deadlineMs, kind, nowMs, ...callIds));
    const answers: unknown[] = [];
    const deadlines: number[] = [];
    const expired: boolean[] = [];
    for (let i = 0; i < replies.length; i += 2) {
      const state = replies[i]!;
      const waiting = state === 'pending' || state === 'expired';
      answers.push(waiting ? undefined : JSON.parse(state));
      expired.push(state === 'expired');
      deadlines.push(Number(replies[i + 1]));
    }
    return { answers, deadlines, expired };
  }

  /**
   * Web: records the client's outputs of client tool calls, all or none (recordToolOutputs-2.lua):
   * `not_pending` names a call that waits for no output, `cancelled` when the run's cancel was
   * accepted, `all_answered` when the caller should wake the run.
   */
  async recordToolOutputs(run: RunRef, outputs: { call_id: string; output: string }[]): Promise<{ outcome: 'recorded' | 'all_answered' | 'cancelled' } | { outcome: 'not_pending'; callId: string }> {
    const k = this.keysOf(run);
    const args = outputs.flatMap((o) => [o.call_id, JSON.stringify({ output: o.output })]);
    const [code, callId] = await callScript(() => this.redis.recordToolOutputs(k.approvals, k.cancel, ...args));
    const outcome = decodeOutcome('recordToolOutputs', code);
    return outcome === 'not_pending' ? { outcome, callId: callId ?? '' } : { outcome };
  }

  /** Web: records a decision; 'not_pending' when the call waits for none, 'all_decided' when the caller should wake the run. */
  async decide(run: RunRef, callId: string, decision: ApprovalDecision): Promise<'not_pending' | 'recorded' | 'all_decided'> {
    return decodeOutcome('decideApproval', await callScript(() => this.redis.decideApproval(this.keysOf(run).approvals, callId, JSON.stringify(decision))));
  }

  /** Worker, its job delayed: the run waits (keeping its conversation for `ttlSeconds`); true when it must wake at once (every call decided, or a cancel accepted, meanwhile). */
  async park(run: RunRef, ttlSeconds: number): Promise<boolean> {
    return (await this.parkRun(run, 'park', ttlSeconds)) === 'wake';
  }

  /** Whether a parked run should wake: every call it waits on answered, or a cancel accepted (parkRun's own rule, read only). */
  async shouldWake(run: RunRef): Promise<boolean> {
    return (await this.parkRun(run, 'look', 0)) === 'wake';
  }

  /** Worker: a run back from waiting counts toward its user's active-run cap again. */
  async rejoin(run: RunRef): Promise<void> {
    const key = this.keysOf(run).userRuns;
    const expiry = Math.floor(Date.now() / 1000) + this.options.markerTtlSeconds;
    await this.redis.pipeline().zadd(key, expiry, run.id).expire(key, this.options.markerTtlSeconds).exec();
  }

  private async parkRun(run: RunRef, mode: 'park' | 'look', ttlSeconds: number) {
    const k = this.keysOf(run);
    return decodeOutcome('parkRun', await callScript(() => this.redis.parkRun(k.approvals, k.active, k.injects, k.userRuns, k.cancel, k.parkable, run.id, ttlSeconds, ttlSeconds + this.options.parkableTtlSeconds, mode)));
  }
}
