import type { EventType, StoredEvent } from '../shared/events.js';
import type { InjectPayload } from '../shared/redis-keys.js';
import type { StopKind } from '../shared/multitask.js';

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
/** A released run names the queued run that took its conversation over, unless an inject still waits to be announced. */
export type ReleaseOutcome = { outcome: 'released'; successor: string | null } | { outcome: 'inject_waiting' };
export interface BreakpointState {
  cancelPending: boolean;
  waiting: InjectPayload[];
}

/** What a parked run's calls have been answered with (RunSignals.requestApprovals). */
export interface ApprovalAnswers {
  /** Each call's answer, undefined while it waits. */
  answers: (unknown | undefined)[];
  /** Each call's deadline (set when first asked for). */
  deadlines: number[];
  /** Whether each call was still unanswered at its deadline: from then on no answer is taken. */
  expired: boolean[];
}
