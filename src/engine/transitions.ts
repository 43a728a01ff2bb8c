import { RUN_STATUSES, type RunStatus } from '../shared/run-statuses.js';
import type { OutcomeScript, ScriptOutcome } from './script-outcomes.js';

/*
 * The life of a run, the one place it is written (DESIGN §5, §11, §19, §22, §23).
 *
 * The web `created` the run `queued` (claimConversation: it holds its conversation, or waits behind
 * the run that does). A worker attempt `started` it: `running` under its attempt number, the fence
 * of every later write. A running run either ends (`succeeded`, `failed`, `cancelled` by a person
 * or `rolled_back` by a newer run, `interrupted` by a newer run), or parks without a worker for a
 * person's approval (`waiting`) or its client's tool outputs (`requires_action`) and is `resumed`
 * when they are in, when cancelled, or at its deadline (it then fails: approval_timeout,
 * client_tool_timeout). A worker that dies leaves it `running`: the next attempt takes it over
 * (`superseded`: the old attempt's writes are refused); a worker that stops or meets an outage
 * `handed_back` the run to the queue. A run that could not be queued ends `failed` at once.
 * Every end and park is written by the attempt that owns the run, from `running` only.
 *
 * TRANSITIONS is that story as data: for each event, the statuses it may leave, the status it
 * reaches, what it writes to Postgres (RunStore's method and columns, whose SQL guards are built
 * from `from`) and to Redis (scripts and the outcomes that lead to it). test/engine/transitions.test.ts
 * checks the SQL guards and the scripts against it.
 */

/** Which RunStore method writes a transition. `claim`: claimAttempt, and load with a claim (one guard). */
export type StoreMethod = 'create' | 'failUnqueued' | 'claim' | 'park' | 'handBack' | 'succeed' | 'fail';

/**
 * What a method's SQL checks before writing: `status` (the row's status is one of `from`),
 * `status and attempt` (also the attempt that owns the run), `status and newer attempt` (a claim:
 * only by a later attempt), `attempt` (only the owning attempt; the status is not read), `none`.
 */
export type Guard = 'none' | 'status' | 'status and attempt' | 'status and newer attempt' | 'attempt';

export interface ScriptStep<S extends OutcomeScript = OutcomeScript> {
  script: S;
  /** The script's outcomes that lead to (or come with) this transition. */
  outcomes: readonly ScriptOutcome<S>[];
}

export type AnyScriptStep = { [S in OutcomeScript]: ScriptStep<S> }[OutcomeScript];

/** A Redis command of the transition, or a script with no named outcomes. */
export interface CommandStep {
  command: string;
  keys: readonly string[];
}

export interface Transition {
  from: readonly RunStatus[];
  to: RunStatus;
  /** `columns` of `runs` it sets (for `create`: the tables it writes). */
  postgres: { method: StoreMethod; guard: Guard; columns: readonly string[] };
  redis: readonly (AnyScriptStep | CommandStep)[];
}

const step = <S extends OutcomeScript>(script: S, ...outcomes: ScriptOutcome<S>[]): ScriptStep<S> => ({ script, outcomes });

const CLAIM_COLUMNS = ['status', 'started_at', 'attempt', 'crashes', 'handed_back', 'required_action'] as const;
const PARK_COLUMNS = ['status', 'usage', 'checkpoint', 'required_action'] as const;
/** Besides the row: the run's assistant message (an interrupted run's words), a rollback's deleted messages, the webhook outbox. */
const FAIL_COLUMNS = ['status', 'error', 'usage', 'answer', 'cost', 'finished_at'] as const;
/** The worker takes the run in Redis: `owner` = its attempt (fencing out older ones; never lowered) and the first breakpoint. */
const TAKE = [step('takeAttempt', 'taken'), step('breakpoint', 'no_cancel', 'cancel_pending')] as const;
/** The calls the run waits on, registered (fenced: `superseded` for an older attempt). */
const REQUEST_ANSWERS = { command: 'requestApprovals', keys: ['run sequence', 'run approvals'] } as const;
/**
 * A failing or cancelled run releases its conversation (a pending cancel does not win) and hands it to the next queued run.
 * Its cancel flag stays: an attempt killed before the final row leaves the stop to the next attempt.
 */
const RELEASE = step('finishRun', 'finished', 'inject_waiting');
/** Once `done` is published, an ended run's numbering, approvals and cancel flag are forgotten (only its stream is kept). */
const FORGET = { command: 'DEL', keys: ['run sequence', 'run approvals', 'run cancel flag'] } as const;

export const TRANSITIONS = {
  created: {
    from: [],
    to: 'queued',
    postgres: { method: 'create', guard: 'none', columns: ['conversations', 'runs', 'messages'] },
    redis: [step('claimConversation', 'claimed', 'queued')],
  },
  enqueue_failed: {
    from: ['queued'],
    to: 'failed',
    postgres: { method: 'failUnqueued', guard: 'status', columns: ['status', 'error', 'finished_at'] },
    // The web undoes its claim: out of the queue (LREM), or its hold released (finishRun, no owner). A run a web left
    // queued without a job (it died first) is ended so by the workers' sweep (WebEngine.abandonUnqueued: the row first).
    redis: [{ command: 'LREM', keys: ['conversation queue'] }, RELEASE, { command: 'DEL', keys: ['run events'] }],
  },
  started: {
    from: ['queued'],
    to: 'running',
    postgres: { method: 'claim', guard: 'status and newer attempt', columns: CLAIM_COLUMNS },
    // A run queued behind another is admitted first (or let through only to end: `end`).
    redis: [step('admitQueued', 'admitted', 'end'), ...TAKE],
  },
  superseded: {
    from: ['running'],
    to: 'running',
    postgres: { method: 'claim', guard: 'status and newer attempt', columns: CLAIM_COLUMNS },
    // The older attempt's fenced scripts (publishEvents, requestApprovals, finishRun) answer `superseded` from now on.
    redis: [...TAKE],
  },
  resumed: {
    from: ['waiting', 'requires_action'],
    to: 'running',
    postgres: { method: 'claim', guard: 'status and newer attempt', columns: CLAIM_COLUMNS },
    // Woken by the last decision or output, an accepted cancel, or the deadline; counts toward the user's cap again.
    redis: [step('decideApproval', 'all_decided'), step('recordToolOutputs', 'all_answered'), step('requestCancel', 'active'), step('parkRun', 'wake'), ...TAKE, { command: 'ZADD', keys: ['user active runs'] }],
  },
  parked_for_approval: {
    from: ['running'],
    to: 'waiting',
    postgres: { method: 'park', guard: 'status and attempt', columns: PARK_COLUMNS },
    redis: [REQUEST_ANSWERS, step('parkRun', 'keep_waiting', 'wake')],
  },
  parked_for_client_tools: {
    from: ['running'],
    to: 'requires_action',
    postgres: { method: 'park', guard: 'status and attempt', columns: PARK_COLUMNS },
    redis: [REQUEST_ANSWERS, step('parkRun', 'keep_waiting', 'wake')],
  },
  handed_back: {
    from: ['running'],
    to: 'running',
    // Only the attempt is checked: the flag says the next attempt is not a crash.
    postgres: { method: 'handBack', guard: 'attempt', columns: ['handed_back'] },
    redis: [],
  },
  succeeded: {
    from: ['running'],
    to: 'succeeded',
    postgres: { method: 'succeed', guard: 'status and attempt', columns: ['status', 'answer', 'output', 'finish_reason', 'usage', 'cost', 'finished_at'] },
    // finishRun (a pending cancel wins: `cancel_pending` makes it `cancelled`), then `done` published and the run's keys forgotten.
    redis: [step('finishRun', 'finished'), FORGET],
  },
  failed: {
    from: ['running'],
    to: 'failed',
    postgres: { method: 'fail', guard: 'status and attempt', columns: FAIL_COLUMNS },
    redis: [RELEASE, FORGET],
  },
  cancelled: {
    from: ['running'],
    to: 'cancelled',
    postgres: { method: 'fail', guard: 'status and attempt', columns: FAIL_COLUMNS },
    redis: [step('requestCancel', 'active', 'dequeued'), step('breakpoint', 'cancel_pending'), step('finishRun', 'cancel_pending'), RELEASE, FORGET],
  },
  rolled_back: {
    from: ['running'],
    to: 'cancelled',
    postgres: { method: 'fail', guard: 'status and attempt', columns: FAIL_COLUMNS },
    // A newer run's claim with multitask_strategy rollback sets this run's cancel flag to `rollback`.
    redis: [step('claimConversation', 'queued'), step('breakpoint', 'cancel_pending'), RELEASE, FORGET],
  },
  interrupted: {
    from: ['running'],
    to: 'interrupted',
    postgres: { method: 'fail', guard: 'status and attempt', columns: FAIL_COLUMNS },
    redis: [step('claimConversation', 'queued'), step('breakpoint', 'cancel_pending'), RELEASE, FORGET],
  },
} as const satisfies Record<string, Transition>;

export type RunEvent = keyof typeof TRANSITIONS;
export const RUN_EVENTS = Object.keys(TRANSITIONS) as RunEvent[];

export function canTransition(from: RunStatus, event: RunEvent): boolean {
  return (TRANSITIONS[event].from as readonly RunStatus[]).includes(from);
}

/** The status `event` takes a run in `from` to; undefined when it may not happen there. */
export function next(from: RunStatus, event: RunEvent): RunStatus | undefined {
  return canTransition(from, event) ? TRANSITIONS[event].to : undefined;
}

/** The statuses a RunStore method's SQL guard lets it write from: every `from` of the events it writes. */
export function guardedStatuses(method: StoreMethod): RunStatus[] {
  const statuses = new Set<RunStatus>(Object.values(TRANSITIONS as Record<string, Transition>).filter((t) => t.postgres.method === method).flatMap((t) => t.from));
  return RUN_STATUSES.filter((status) => statuses.has(status));
}

const leaves = (status: RunStatus) => Object.values(TRANSITIONS as Record<string, Transition>).some((t) => t.from.includes(status) && t.to !== status);

/** No event leaves them. */
export const FINAL_STATUSES: RunStatus[] = RUN_STATUSES.filter((status) => !leaves(status));
/**
 * Not final: the run may still change. src/shared/run-statuses.ts (below src/db, which may not
 * import the engine) spells FINAL_RUN_STATUSES and PARKED_RUN_STATUSES; the test checks they agree.
 */
export const ACTIVE_STATUSES: RunStatus[] = RUN_STATUSES.filter((status) => leaves(status));
/** Where a park leaves a run: no worker, waiting for answers. */
export const PARKED_STATUSES: RunStatus[] = [TRANSITIONS.parked_for_approval.to, TRANSITIONS.parked_for_client_tools.to];
/** The status in which an attempt works (and writes its checkpoints). */
export const WORKING_STATUS: RunStatus = TRANSITIONS.started.to;
/** A run that has started and not ended holds its conversation: another run of it waits (admitQueued). */
export const HOLDING_STATUSES: RunStatus[] = ACTIVE_STATUSES.filter((status) => !(TRANSITIONS.started.from as readonly RunStatus[]).includes(status));

