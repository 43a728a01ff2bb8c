import type { EventData, EventType } from '../../src/shared/events.js';
import type { OutgoingEvent, RunRef } from '../../src/engine/worker-engine.js';
import { RunFailure } from './run-control.js';

/** The event scope of everything that happens in order; DAG nodes running side by side get their own. */
export const MAIN_SCOPE = 'run';
/**
 * The last events of a run (answer or error, then done) are numbered in their own scope, so they
 * are published once even if a worker dies between writing the final row and publishing them.
 */
export const END_SCOPE = 'end';
export const nodeScope = (nodeId: string) => `node:${nodeId}`;

/** Where a run's events go: the run engine's stream (WorkerEngine.publish), fenced by the attempt that owns the run. */
export interface EventPublisher {
  publish(run: RunRef, owner: string, events: OutgoingEvent[]): Promise<number>;
}

/** Events waiting to be sent past which `publish` makes its caller wait for them (backpressure). */
const HIGH_WATER = 256;

export interface EventNumbering {
  /** Whether the run's model remakes an interrupted step exactly (see `scopeKey`). */
  deterministic: boolean;
  attempt: number;
  /** Last number per scope, from the checkpoint a resumed attempt starts from. */
  seqs?: Record<string, number>;
}

/**
 * A run's outgoing events: numbered per scope, so a resumed loop that makes an event again
 * publishes nothing twice; and batched, so events made in one turn of the event loop (a gateway
 * chunk of twenty tokens) travel in one script call and ring the doorbell once. Order is kept by
 * sending one batch at a time. The run's first token goes at once, with what is queued before it
(the first-token latency, issue 36); the tokens after it batch. What must follow them (a checkpoint, the end decision, the
 * end) waits for them with `flush`, which also surfaces a failed send.
 */
export class RunEvents {
  readonly seqs: Record<string, number>;
  private pending: OutgoingEvent[] = [];
  private scheduled: NodeJS.Immediate | undefined;
  private sent: Promise<unknown> = Promise.resolve();
  private failure: unknown;
  private counted: number;
  private firstTokenSent = false;
  /** Why the attempt's claim was refused: nothing of it is ever published. */
  private refused: unknown;

  constructor(
    private readonly publisher: EventPublisher,
    private readonly run: RunRef,
    private readonly numbering: EventNumbering,
    /** RUN_MAX_EVENTS: past it the run fails (its end events are not counted). */
    private readonly maxEvents: number,
    /** What the first send waits for: the attempt's claim (a refused one fails every send, so nothing is published). */
    claimed: Promise<unknown> = Promise.resolve(),
  ) {
    this.seqs = { ...numbering.seqs };
    this.counted = Object.entries(this.seqs).reduce((sum, [scope, seq]) => (scope === END_SCOPE ? sum : sum + seq), 0);
    this.sent = claimed.then(
      () => undefined,
      (err: unknown) => {
        this.refused = err;
      },
    );
  }

  private get owner(): string {
    return String(this.numbering.attempt);
  }

  /** Numbers the event in its scope and queues it; resolves at once unless too many are waiting. */
  publish<T extends EventType>(type: T, data: EventData<T>, scope = MAIN_SCOPE): Promise<void> {
    return this.enqueue(this.number(type, data, scope));
  }

  /**
   * Numbers an event now and leaves it to `publishNumbered` later: an event that announces a state goes out
   * only once the row that records it is committed (DESIGN §21), while a checkpoint written before
   * that already counts it, so the resumed run numbers its events after it.
   */
  number<T extends EventType>(type: T, data: EventData<T>, scope = MAIN_SCOPE): OutgoingEvent {
    if (scope !== END_SCOPE && ++this.counted > this.maxEvents) {
      throw new RunFailure('run_max_events', `The run reached RUN_MAX_EVENTS (${this.maxEvents} events)`);
    }
    const key = this.scopeKey(scope);
    const seq = (this.seqs[key] ?? 0) + 1;
    this.seqs[key] = seq;
    return { type, data: JSON.stringify(data), scope: key, seq };
  }

  /** Sends an event numbered earlier (`number`) and waits for it and everything before it. */
  publishNumbered(event: OutgoingEvent): Promise<void> {
    this.pending.push(event);
    return this.flush();
  }

  /** An event outside the numbering (`status: resumed`): always appended. */
  announce<T extends EventType>(type: T, data: EventData<T>): Promise<void> {
    return this.enqueue({ type, data: JSON.stringify(data), scope: '', seq: 0 });
  }

  /** Where a scope's numbering stands; a node that re-runs from its start counts from 0 again. */
  setScope(scope: string, seq: number): void {
    this.seqs[this.scopeKey(scope)] = seq;
  }

  /** Sends what is queued and waits for everything sent so far; rethrows (once) a send that failed. */
  async flush(): Promise<void> {
    this.send();
    await this.sent;
    const failure = this.failure ?? this.refused;
    this.failure = undefined;
    if (failure) throw failure;
  }

  /**
   * A deterministic model remakes the interrupted step's events exactly, so a resumed attempt
   * numbers them as before and the ones already sent are dropped. A gateway model makes the step
   * anew: matching by number would splice two different answers, so a resumed attempt numbers its
   * events afresh (after `status: resumed`, the interrupted step starts over for the client).
   */
  private scopeKey(scope: string): string {
    const { deterministic, attempt } = this.numbering;
    return deterministic || attempt <= 1 || scope === END_SCOPE ? scope : `${scope}@${attempt}`;
  }

  private enqueue(event: OutgoingEvent): Promise<void> {
    this.pending.push(event);
    if (!this.firstTokenSent && event.type === 'token') {
      this.firstTokenSent = true;
      this.send();
    } else {
      this.scheduled ??= setImmediate(() => this.send());
    }
    return this.pending.length >= HIGH_WATER ? this.flush() : Promise.resolve();
  }

  private send(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    // One batch in flight at a time, and none after a failed one: a Redis Cluster retries a send
    // cut off by a node's restart after later ones went through, and a later seq already stored
    // would make the earlier events look published (a resumed attempt would then skip them).
    this.sent = this.sent.then(() =>
      this.failure || this.refused
        ? undefined
        : this.publisher.publish(this.run, this.owner, batch).catch((err: unknown) => {
            this.failure ??= err;
          }),
    );
  }
}
