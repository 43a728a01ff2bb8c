import type { LoopState } from './checkpoint.js';
import type { ClientToolCall } from '../../src/shared/client-tools.js';
/** How a running loop is told to stop: a failure, a cancel, or the worker shutting down. */

/** The run ends with an `error` event carrying `code` (a model that does not exist, a loop that would not end, …). */
export class RunFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
  }
}

/** The run was cancelled (POST /api/runs/{id}/cancel): it ends with `done {status: "cancelled"}`. */
export class RunCancelled extends Error {
  constructor() {
    super('the run was cancelled');
  }
}

/**
 * The run goes back to the queue unfinished, to resume from its checkpoint: the worker is
 * shutting down, or Postgres went away mid-run.
 */
export class HandBack extends Error {
  constructor(readonly reason: 'shutdown' | 'outage') {
    super(`run handed back (${reason})`);
  }
}

/**
 * Tool calls of the current step wait for a person's approval (DESIGN §11) or for the client's
 * outputs (`clientCalls`, DESIGN §23): the loop checkpoints its state and the run parks until the
 * answers are in, or `deadlineMs`.
 */
export class AwaitingApproval extends Error {
  constructor(
    readonly deadlineMs: number,
    /** The loop's state to resume from, once the loop has added it. */
    readonly state?: LoopState,
    /** Client tool calls waiting for their outputs: the run parks `requires_action` with them. */
    readonly clientCalls: ClientToolCall[] = [],
  ) {
    super(clientCalls.length > 0 ? "tool calls wait for the client's outputs" : 'tool calls wait for approval');
  }

  withState(state: LoopState): AwaitingApproval {
    return new AwaitingApproval(this.deadlineMs, state, this.clientCalls);
  }
}

export interface RunControl {
  /** Aborted with a RunCancelled or HandBack as its reason; model calls and tools take it. */
  signal: AbortSignal;
  /** The worker is shutting down: hand the run back at its next breakpoint. */
  draining(): boolean;
}

/** The worker-wide side: draining and the hard stop that cuts off loops that take too long. */
export class WorkerLifecycle {
  private isDraining = false;
  private readonly hardStop = new AbortController();

  drain(): void {
    this.isDraining = true;
  }

  stopNow(): void {
    this.hardStop.abort(new HandBack('shutdown'));
  }

  /** One run's control: its own cancel, plus the worker's draining and hard stop. */
  controlFor(cancel: AbortController): RunControl {
    return { signal: AbortSignal.any([cancel.signal, this.hardStop.signal]), draining: () => this.isDraining };
  }
}
