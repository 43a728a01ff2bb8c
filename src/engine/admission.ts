import { randomUUID } from 'node:crypto';
import type { EventData } from '../shared/events.js';
import { stopKindOf, type MultitaskStrategy } from '../shared/multitask.js';
import type { Claim, FinishOutcome, ReleaseOutcome, RunRef } from './protocol-types.js';
import { callScript, ProtocolPart } from './run-scripts.js';
import { decodeOutcome } from './script-outcomes.js';

/**
 * Who holds a conversation (DESIGN §19): the web claims it for a run or queues the run behind the
 * active one, the worker admits a queued run once its turn comes, and a run's end (finished or
 * released) hands the conversation to the next run waiting. The web also holds a conversation
 * with no run for its deletion.
 */
export class Admission extends ProtocolPart {
  /**
   * Web: marks the conversation active for the run, or queues the run behind the active one as
   * `strategy` says (DESIGN §19), and publishes its `run` event; unless refused.
   */
  async claim(run: RunRef, announced: EventData<'run'>, userLimit: number, strategy: MultitaskStrategy = 'reject', parkedLimit = 0): Promise<Claim> {
    const k = this.keysOf(run);
    const data = JSON.stringify(announced);
    const [outcome, eventId, active] = await callScript(() => this.redis.claimConversation(
      k.active,
      this.keys.runEvents(run),
      k.userRuns,
      k.queue,
      k.parkable,
      run.id,
      this.options.markerTtlSeconds,
      this.options.streamMaxLength,
      'run',
      data,
      this.keys.runDoorbell(run),
      userLimit,
      this.keys.doorbellCommand,
      strategy,
      this.options.queueLimit,
      this.keys.runKeyPrefix(run.userId),
      this.keys.cancelChannel,
      parkedLimit,
      this.options.parkableTtlSeconds,
    ));
    return { outcome: decodeOutcome('claimConversation', outcome), activeRunId: active || null, event: eventId ? { id: eventId, type: 'run', data } : null };
  }

  /** Web, undoing a claim that queued the run: it leaves the queue (false when it was not there). */
  async withdraw(run: RunRef): Promise<boolean> {
    return (await this.redis.lrem(this.keysOf(run).queue, 1, run.id)) === 1;
  }

  /** Whether the run holds its conversation now. */
  async holds(run: RunRef): Promise<boolean> {
    return (await this.redis.get(this.keysOf(run).active)) === run.id;
  }

  /** Worker: whether a run queued behind another may start now, must wait, or may only end (cancelled while it waited); see admitQueued-4.lua. */
  async admit(run: RunRef): Promise<'admitted' | 'wait' | 'end'> {
    const k = this.keysOf(run);
    const answer = await callScript(() => this.redis.admitQueued(k.active, k.queue, k.userRuns, k.cancel, run.id, this.options.markerTtlSeconds));
    return decodeOutcome('admitQueued', answer);
  }

  /** Worker: the run's one atomic end decision. A pending cancel wins; a waiting inject must be answered first. */
  async finish(run: RunRef, owner: string): Promise<FinishOutcome> {
    const [code, detail] = await this.end(run, 1, owner);
    const outcome = decodeOutcome('finishRun', code);
    if (outcome === 'cancel_pending') return { outcome, kind: stopKindOf(detail) ?? 'cancel' };
    return outcome === 'inject_waiting' ? { outcome } : { outcome, successor: detail || null };
  }

  /**
   * Failing or cancelling (`owner` = the attempt), or the web undoing a claim (no owner): frees the
   * conversation unless an inject is still waiting to be announced.
   */
  async release(run: RunRef, owner = ''): Promise<ReleaseOutcome> {
    const [code, successor] = await this.end(run, 0, owner);
    // Releasing, a pending cancel does not win (ARGV[2] = '0'): finishRun answers finished or inject_waiting.
    return decodeOutcome('finishRun', code) === 'finished' ? { outcome: 'released', successor: successor || null } : { outcome: 'inject_waiting' };
  }

  /**
   * Web and the retention job (DESIGN §20): holds a conversation with no active or waiting run
   * for its deletion (see holdConversation-2.lua), for `seconds` should the holder die; null when
   * a run is active or waiting. `release()` when the deletion did not happen; `linger(seconds)`
   * when it did, so a request that read the conversation just before cannot recreate it.
   */
  async holdForDeletion(userId: string, conversationId: string, seconds = 60): Promise<{ release(): Promise<void>; linger(seconds: number): Promise<void> } | null> {
    const keys = [this.keys.conversationActive(userId, conversationId), this.keys.conversationQueue(userId, conversationId)] as const;
    const tombstone = `deleting:${randomUUID()}`;
    const held = await callScript(() => this.redis.holdConversation(...keys, 'hold', tombstone, seconds));
    if (decodeOutcome('holdConversation', held) !== 'done') return null;
    return {
      release: async () => void (await callScript(() => this.redis.holdConversation(...keys, 'release', tombstone, 0))),
      linger: async (lingerSeconds: number) => void (await callScript(() => this.redis.holdConversation(...keys, 'linger', tombstone, lingerSeconds))),
    };
  }

  private end(run: RunRef, honourCancel: 0 | 1, owner: string): Promise<[number, string]> {
    const k = this.keysOf(run);
    return callScript(() => this.redis.finishRun(k.injects, k.active, k.cancel, k.userRuns, k.sequence, k.queue, k.approvals, k.parkable, run.id, honourCancel, owner, this.options.markerTtlSeconds));
  }
}
