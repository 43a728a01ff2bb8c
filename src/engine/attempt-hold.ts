import type { ChainableCommander } from 'ioredis';
import type { InjectPayload } from '../shared/redis-keys.js';
import { isNoScript } from '../shared/redis-scripts.js';
import type { BreakpointState, RunRef } from './protocol-types.js';
import { callScript, ProtocolPart, type RunScriptCommands } from './run-scripts.js';
import { decodeOutcome } from './script-outcomes.js';

/**
 * A worker attempt's hold on its run: it takes the run (fencing out older attempts), keeps the
 * hold alive at each breakpoint (hearing a pending cancel and the injects waiting), acknowledges
 * the injects it has stored, and forgets the run once it is over.
 */
export class AttemptHold extends ProtocolPart {
  /**
   * Makes `attempt` the only one allowed to publish, and does the first breakpoint's work in the
   * same round trip.
   */
  async take(run: RunRef, attempt: number): Promise<BreakpointState> {
    const pipeline = this.redis.pipeline() as ChainableCommander & RunScriptCommands;
    const k = this.keysOf(run);
    pipeline.takeAttempt(k.sequence, attempt);
    pipeline.breakpoint(k.active, k.userRuns, k.cancel, k.injects, run.id, this.options.markerTtlSeconds);
    const replies = await pipeline.exec();
    const [[ownerErr, taken], [breakpointErr, state]] = replies as [[Error | null, number], [Error | null, [number, ...string[]]]];
    // A script lost with a restarted cluster node is simply asked for again (see isNoScript).
    if (isNoScript(ownerErr)) await callScript(() => this.redis.takeAttempt(k.sequence, attempt));
    else if (ownerErr) throw ownerErr;
    // A stale take (a newer attempt owns the run) leaves the owner as it is: this attempt's first publish or write is refused as superseded.
    else decodeOutcome('takeAttempt', taken);
    if (isNoScript(breakpointErr)) return this.breakpoint(run);
    if (breakpointErr) throw breakpointErr;
    return breakpointState(state);
  }

  /** Keeps the run's hold alive; reports a pending cancel and the injects waiting (left in the list). */
  async breakpoint(run: RunRef): Promise<BreakpointState> {
    const k = this.keysOf(run);
    return breakpointState(await callScript(() => this.redis.breakpoint(k.active, k.userRuns, k.cancel, k.injects, run.id, this.options.markerTtlSeconds)));
  }

  /** Removes the first `count` injects once they are safely in the checkpoint; how many still wait. */
  acknowledge(run: RunRef, count: number): Promise<number> {
    return callScript(() => this.redis.acknowledgeInjects(this.keysOf(run).injects, count));
  }

  /**
   * Once `done` is in the stream: drops the run's numbering and approvals, so a finished run
   * leaves only its stream (expiring after `streamTtlSeconds`). Any later publish is refused as
   * superseded (no owner is left).
   */
  async forget(run: RunRef): Promise<void> {
    const k = this.keysOf(run);
    await this.redis.del(k.sequence, k.approvals, k.cancel);
  }
}

function breakpointState([cancel, ...items]: [number, ...string[]]): BreakpointState {
  return { cancelPending: decodeOutcome('breakpoint', cancel) === 'cancel_pending', waiting: items.map((item) => JSON.parse(item) as InjectPayload) };
}
