import { randomUUID } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import type { EventData, EventType, StoredEvent } from '../shared/events.js';
import type { InjectPayload, RedisKeys } from '../shared/redis-keys.js';
import { isNoScript, type ScriptCommands, type ScriptedRedis } from '../shared/redis-scripts.js';
import { stopKindOf, type MultitaskStrategy, type StopKind } from '../shared/multitask.js';
import { decodeOutcome, decodeScriptError } from './script-outcomes.js';

/** Which run a protocol step is about: its keys are built from these ids. */
export interface RunRef {
  id: string;
  conversationId: string;
  userId: string;
}

/** An event on its way to the run's stream; `scope` '' = not numbered (always appended). */
export interface OutgoingEvent {
  type: EventType;
  /** One-line JSON. */
  data: string;
  scope: string;
  seq: number;
}

export interface LeaseOptions {
  /** How long the conversation's active marker (and the user's cap entry) lives without a refresh. */
  markerTtlSeconds: number;
  /** How long a finished run's stream is kept. */
  streamTtlSeconds: number;
  streamMaxLength: number;
  /** RUN_QUEUE_PER_CONVERSATION: most runs that may wait on one conversation (DESIGN §19). */
  queueLimit: number;
  /** How long a parkable run's entry (PARKED_RUNS_PER_USER) lives unrefreshed: RUN_MAX_DURATION_S and a margin, refreshed at each parking. */
  parkableTtlSeconds: number;
}

/** The largest doorbell that carries its events (publishEvents-2.lua); a larger batch rings with its count and is read from the stream. */
const CARRIED_DOORBELL_MAX_BYTES = 16_384;

/** What a doorbell says: new entries to read from the stream, or the entries themselves and the id of the one before them. */
export type Doorbell = { carried: false } | { carried: true; previousId: string; entries: { id: string; type: string; data: string }[] };

/** A doorbell that carries nothing: read the stream from the last id. */
export const RING: Doorbell = { carried: false };

/** Reads a doorbell's message (see publishEvents-2.lua): "<previous id>\n<id>\n<type>\n<data>…", or a count. */
export function readDoorbell(message: string): Doorbell {
  const parts = message.split('\n');
  if (parts.length < 4 || (parts.length - 1) % 3 !== 0) return RING;
  const entries: { id: string; type: string; data: string }[] = [];
  for (let i = 1; i < parts.length; i += 3) entries.push({ id: parts[i]!, type: parts[i + 1]!, data: parts[i + 2]! });
  return { carried: true, previousId: parts[0]!, entries };
}

export const DEFAULT_LEASE: LeaseOptions = { markerTtlSeconds: 600, streamTtlSeconds: 3600, streamMaxLength: 20_000, queueLimit: 10, parkableTtlSeconds: 4200 };

/** The lease options of a deployment: RUN_STREAM_TTL_S, RUN_QUEUE_PER_CONVERSATION and RUN_MAX_DURATION_S (config.runs) on the defaults. */
export const leaseOptions = (runs: { streamTtlSeconds: number; queuePerConversation: number; maxDurationMs: number }): LeaseOptions => ({
  ...DEFAULT_LEASE,
  streamTtlSeconds: runs.streamTtlSeconds,
  queueLimit: runs.queuePerConversation,
  parkableTtlSeconds: Math.ceil(runs.maxDurationMs / 1000) + DEFAULT_LEASE.markerTtlSeconds,
});

/**
 * `claimed`: the run holds the conversation; `queued`: it waits behind `activeRunId` (DESIGN §19);
 * refused: `busy` (reject), `full` (RUN_QUEUE_PER_CONVERSATION), `limit` (the user's active-run cap).
 */
export interface Claim {
  outcome: 'claimed' | 'queued' | 'busy' | 'full' | 'limit' | 'parked_limit';
  activeRunId: string | null;
  /** The run's `run` event as its stream holds it, when claimed or queued. */
  event: StoredEvent | null;
}
/** A person's decision on a tool call that waited for approval (DESIGN §11). */
export interface ApprovalDecision {
  decision: 'approve' | 'reject';
  message?: string;
}
/** A finished run names the queued run that took its conversation over (its job must be woken). */
export type FinishOutcome = { outcome: 'finished'; successor: string | null } | { outcome: 'inject_waiting' } | { outcome: 'cancel_pending'; kind: StopKind };
export interface BreakpointState {
  cancelPending: boolean;
  waiting: InjectPayload[];
}

/**
 * The Redis side of a run, the one owner of its keys and scripts (DESIGN §5): the web claims a
 * conversation for a run, queues injects and accepts cancels; the worker takes the run (fencing
 * out older attempts), keeps it alive at breakpoints, publishes its events and decides its end.
 * One method per script; each builds its own keys from the run's ids.
 */
export class RunLease {
  constructor(
    private readonly redis: ScriptedRedis,
    readonly keys: RedisKeys,
    readonly options: LeaseOptions = DEFAULT_LEASE,
  ) {}

  /** The run's event stream and doorbell, for readers (the relay). */
  stream(run: RunRef): { key: string; doorbell: string } {
    return { key: this.keys.runEvents(run), doorbell: this.keys.runDoorbell(run) };
  }

  /**
   * Web: marks the conversation active for the run, or queues the run behind the active one as
   * `strategy` says (DESIGN §19), and publishes its `run` event; unless refused.
   */
  async claim(run: RunRef, announced: EventData<'run'>, userLimit: number, strategy: MultitaskStrategy = 'reject', parkedLimit = 0): Promise<Claim> {
    const { key, doorbell } = this.stream(run);
    const data = JSON.stringify(announced);
    const [outcome, eventId, active] = await callScript(() => this.redis.claimConversation(
      this.keys.conversationActive(run.userId, run.conversationId),
      key,
      this.keys.userActiveRuns(run.userId),
      this.keys.conversationQueue(run.userId, run.conversationId),
      this.keys.userParkableRuns(run.userId),
      run.id,
      this.options.markerTtlSeconds,
      this.options.streamMaxLength,
      'run',
      data,
      doorbell,
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
    return (await this.redis.lrem(this.keys.conversationQueue(run.userId, run.conversationId), 1, run.id)) === 1;
  }

  /** Whether the run holds its conversation now. */
  async holds(run: RunRef): Promise<boolean> {
    return (await this.redis.get(this.keys.conversationActive(run.userId, run.conversationId))) === run.id;
  }

  /** Worker: whether a run queued behind another may start now, must wait, or may only end (cancelled while it waited); see admitQueued-4.lua. */
  async admit(run: RunRef): Promise<'admitted' | 'wait' | 'end'> {
    const answer = await callScript(() => this.redis.admitQueued(
      this.keys.conversationActive(run.userId, run.conversationId),
      this.keys.conversationQueue(run.userId, run.conversationId),
      this.keys.userActiveRuns(run.userId),
      this.keys.runCancel(run),
      run.id,
      this.options.markerTtlSeconds,
    ));
    return decodeOutcome('admitQueued', answer);
  }

  /** Worker: why a cancelled run was told to stop (a person's cancel, or a newer run's interrupt or rollback). */
  async stopKind(run: RunRef): Promise<StopKind> {
    return stopKindOf(await this.redis.get(this.keys.runCancel(run))) ?? 'cancel';
  }

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
    const accepted = await callScript(() => this.redis.requestCancel(
      this.keys.conversationActive(run.userId, run.conversationId),
      this.keys.runCancel(run),
      this.keys.conversationQueue(run.userId, run.conversationId),
      run.id,
      this.keys.cancelChannel,
      this.options.markerTtlSeconds,
    ));
    const outcome = decodeOutcome('requestCancel', accepted);
    return outcome === 'refused' ? false : outcome;
  }

  /**
   * Worker: makes `attempt` the only one allowed to publish, and does the first breakpoint's work
   * in the same round trip.
   */
  async take(run: RunRef, attempt: number): Promise<BreakpointState> {
    const pipeline = this.redis.pipeline() as ChainableCommander & ScriptCommands;
    const k = this.holdKeys(run);
    pipeline.takeAttempt(this.keys.runSequence(run), attempt);
    pipeline.breakpoint(k.active, k.userRuns, k.cancel, k.injects, run.id, this.options.markerTtlSeconds);
    const replies = await pipeline.exec();
    const [[ownerErr, taken], [breakpointErr, state]] = replies as [[Error | null, number], [Error | null, [number, ...string[]]]];
    // A script lost with a restarted cluster node is simply asked for again (see isNoScript).
    if (isNoScript(ownerErr)) await callScript(() => this.redis.takeAttempt(this.keys.runSequence(run), attempt));
    else if (ownerErr) throw ownerErr;
    // A stale take (a newer attempt owns the run) leaves the owner as it is: this attempt's first publish or write is refused as superseded.
    else decodeOutcome('takeAttempt', taken);
    if (isNoScript(breakpointErr)) return this.breakpoint(run);
    if (breakpointErr) throw breakpointErr;
    return breakpointState(state);
  }

  /** Worker: keeps the run's hold alive; reports a pending cancel and the injects waiting (left in the list). */
  async breakpoint(run: RunRef): Promise<BreakpointState> {
    const k = this.holdKeys(run);
    return breakpointState(await callScript(() => this.redis.breakpoint(k.active, k.userRuns, k.cancel, k.injects, run.id, this.options.markerTtlSeconds)));
  }

  /** Worker: removes the first `count` injects once they are safely in the checkpoint; how many still wait. */
  acknowledge(run: RunRef, count: number): Promise<number> {
    return callScript(() => this.redis.acknowledgeInjects(this.keys.conversationInjects(run.userId, run.conversationId), count));
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
  async release(run: RunRef, owner = ''): Promise<{ outcome: 'released'; successor: string | null } | { outcome: 'inject_waiting' }> {
    const [code, successor] = await this.end(run, 0, owner);
    // Releasing, a pending cancel does not win (ARGV[2] = '0'): finishRun answers finished or inject_waiting.
    return decodeOutcome('finishRun', code) === 'finished' ? { outcome: 'released', successor: successor || null } : { outcome: 'inject_waiting' };
  }

  /** Worker: appends events (fenced by `owner`, idempotent per scope and seq) and rings the doorbell once, carrying them when they fit. */
  async publish(run: RunRef, owner: string, events: OutgoingEvent[]): Promise<number> {
    const { key, doorbell } = this.stream(run);
    const args = events.flatMap((e) => [e.type, e.data, e.scope, e.seq]);
    return callScript(() => this.redis.publishEvents(key, this.keys.runSequence(run), this.options.streamMaxLength, doorbell, owner, this.options.streamTtlSeconds, this.keys.doorbellCommand, CARRIED_DOORBELL_MAX_BYTES, ...args));
  }

  /**
   * Worker: registers calls that wait for an answer — a person's approval, or (`client`) the
   * client's output of a client tool call (DESIGN §23) — keeping answers already given, and reads
   * them: each call's answer (undefined while it waits), deadline (set when first asked for), and
   * whether it expired (still unanswered at its deadline by `nowMs`: from then on no answer is taken).
   */
  async requestApprovals(run: RunRef, owner: string, callIds: string[], deadlineMs: number, ttlSeconds: number, kind: 'approval' | 'client' = 'approval', nowMs = Date.now()): Promise<{ answers: (unknown | undefined)[]; deadlines: number[]; expired: boolean[] }> {
    const replies = await callScript(() => this.redis.requestApprovals(this.keys.runSequence(run), this.keys.runApprovals(run), owner, ttlSeconds, deadlineMs, kind, nowMs, ...callIds));
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
    const args = outputs.flatMap((o) => [o.call_id, JSON.stringify({ output: o.output })]);
    const [code, callId] = await callScript(() => this.redis.recordToolOutputs(this.keys.runApprovals(run), this.keys.runCancel(run), ...args));
    const outcome = decodeOutcome('recordToolOutputs', code);
    return outcome === 'not_pending' ? { outcome, callId: callId ?? '' } : { outcome };
  }

  /** Web: records a decision; 'not_pending' when the call waits for none, 'all_decided' when the caller should wake the run. */
  async decide(run: RunRef, callId: string, decision: ApprovalDecision): Promise<'not_pending' | 'recorded' | 'all_decided'> {
    return decodeOutcome('decideApproval', await callScript(() => this.redis.decideApproval(this.keys.runApprovals(run), callId, JSON.stringify(decision))));
  }

  /** Worker, its job delayed: the run waits (keeping its conversation for `ttlSeconds`); true when it must wake at once (every call decided, or a cancel accepted, meanwhile). */
  async park(run: RunRef, ttlSeconds: number): Promise<boolean> {
    return (await this.parkRun(run, 'park', ttlSeconds)) === 'wake';
  }

  /** Whether a parked run should wake: every call it waits on answered, or a cancel accepted (parkRun's own rule, read only). */
  async shouldWake(run: RunRef): Promise<boolean> {
    return (await this.parkRun(run, 'look', 0)) === 'wake';
  }

  private async parkRun(run: RunRef, mode: 'park' | 'look', ttlSeconds: number) {
    const k = this.holdKeys(run);
    return decodeOutcome('parkRun', await callScript(() => this.redis.parkRun(this.keys.runApprovals(run), k.active, k.injects, k.userRuns, k.cancel, k.parkable, run.id, ttlSeconds, ttlSeconds + this.options.parkableTtlSeconds, mode)));
  }

  /** Worker: a run back from waiting counts toward its user's active-run cap again. */
  async rejoin(run: RunRef): Promise<void> {
    const key = this.keys.userActiveRuns(run.userId);
    const expiry = Math.floor(Date.now() / 1000) + this.options.markerTtlSeconds;
    await this.redis.pipeline().zadd(key, expiry, run.id).expire(key, this.options.markerTtlSeconds).exec();
  }

  /** The run's last event (its id, type and data as stored), if its stream is still kept. */
  async lastEvent(run: RunRef): Promise<{ id: string; type: string; data: string } | undefined> {
    const [entry] = await this.redis.xrevrange(this.keys.runEvents(run), '+', '-', 'COUNT', 1);
    if (!entry) return undefined;
    const [id, fields] = entry;
    const field = (name: string) => (fields.includes(name) ? (fields[fields.indexOf(name) + 1] ?? '') : '');
    return { id, type: field('type'), data: field('data') || '{}' };
  }

  /** Whether the run's stream is still kept (it expires `streamTtlSeconds` after `done`). */
  async streamExists(run: RunRef): Promise<boolean> {
    return (await this.redis.exists(this.keys.runEvents(run))) === 1;
  }

  /**
   * Worker, once `done` is in the stream: drops the run's numbering, approvals and cancel flag, so
   * a finished run leaves only its stream (expiring after `streamTtlSeconds`). Any later publish is
   * refused as superseded (no owner is left). The flag outlives the release (finishRun) until here:
   * an attempt killed before the final row leaves the stop for the next one.
   */
  async forget(run: RunRef): Promise<void> {
    await this.redis.del(this.keys.runSequence(run), this.keys.runApprovals(run), this.keys.runCancel(run));
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

  /** Web: drops the stream of a run that could not be queued. */
  async discardStream(run: RunRef): Promise<void> {
    await this.redis.del(this.keys.runEvents(run));
  }

  private holdKeys(run: RunRef) {
    return {
      active: this.keys.conversationActive(run.userId, run.conversationId),
      userRuns: this.keys.userActiveRuns(run.userId),
      parkable: this.keys.userParkableRuns(run.userId),
      cancel: this.keys.runCancel(run),
      injects: this.keys.conversationInjects(run.userId, run.conversationId),
    };
  }

  private end(run: RunRef, honourCancel: 0 | 1, owner: string): Promise<[number, string]> {
    const k = this.holdKeys(run);
    const queue = this.keys.conversationQueue(run.userId, run.conversationId);
    return callScript(() => this.redis.finishRun(k.injects, k.active, k.cancel, k.userRuns, this.keys.runSequence(run), queue, this.keys.runApprovals(run), k.parkable, run.id, honourCancel, owner, this.options.markerTtlSeconds));
  }
}

/** Calls a script, once more on NOSCRIPT (see isNoScript); its error replies decoded (SUPERSEDED as Superseded). */
async function callScript<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call().catch((err: unknown) => (isNoScript(err) ? call() : Promise.reject(err)));
  } catch (err) {
    throw decodeScriptError(err);
  }
}

function breakpointState([cancel, ...items]: [number, ...string[]]): BreakpointState {
  return { cancelPending: decodeOutcome('breakpoint', cancel) === 'cancel_pending', waiting: items.map((item) => JSON.parse(item) as InjectPayload) };
}
