import { RUN_EVENTS, TRANSITIONS, type RunEvent, type Transition } from './transitions.js';

/*
 * The writes of the transition table as points the engine passes (DESIGN §28, crash-tested writes).
 * WorkerEngine and WebEngine tell their WritePoints just before and just after each write the table
 * names: the Postgres method (RunStore) and each Redis script or command. In production nobody
 * listens (NO_WRITE_POINTS); the crash harness (test/engine/crash.test.ts) stops an attempt or a
 * web at each one. WRITE_POINTS lists them all, from TRANSITIONS.
 */

export type WriteSide = 'before' | 'after';

/**
 * One write as the engine performs it: its name in the table (a RunStore method, a script or a
 * command) and the events it may be carrying out. One call may serve several events: the take
 * claims a run whether it is `started`, `superseded` or `resumed` (the row's status, not the
 * engine, tells which); a scenario that carries out one of them tells them apart.
 */
export interface Write {
  name: string;
  events: readonly RunEvent[];
}

/** A point of the table: `side` of `write` while carrying out `event`. */
export interface WritePoint {
  event: RunEvent;
  write: string;
  side: WriteSide;
}

/** The engine's listener. `reach` is synchronous: a harness that throws there stops the caller before (or right after) the write. */
export interface WritePoints {
  reach(write: Write, side: WriteSide): void;
}

export const NO_WRITE_POINTS: WritePoints = { reach() {} };

/** What a transition writes, by name: its Postgres method, then its Redis steps in order. */
export function writesOf(transition: Transition): string[] {
  const names = [transition.postgres.method, ...transition.redis.map((step) => ('script' in step ? step.script : step.command))];
  return [...new Set(names)];
}

const SIDES: readonly WriteSide[] = ['before', 'after'];

/** Every point of the table: each event's writes, before and after. */
export const WRITE_POINTS: readonly WritePoint[] = RUN_EVENTS.flatMap((event) =>
  writesOf(TRANSITIONS[event]).flatMap((write) => SIDES.map((side) => ({ event, write, side }))),
);

/** A write the engine performs; refused at load when the table does not name it for each of `events`. */
function write(name: string, ...events: RunEvent[]): Write {
  for (const event of events) {
    if (!writesOf(TRANSITIONS[event]).includes(name)) throw new Error(`the transition table names no ${name} for ${event}`);
  }
  return { name, events };
}

const CLAIMS = ['started', 'superseded', 'resumed'] as const;
const STOPS = ['cancelled', 'rolled_back', 'interrupted'] as const;

/** The writes of WebEngine and WorkerEngine, each named once. */
export const WRITES = {
  /** Web: a run's claim; a newer run's claim is also what rolls back or interrupts the active one. */
  claimConversation: write('claimConversation', 'created', 'rolled_back', 'interrupted'),
  create: write('create', 'created'),
  withdraw: write('LREM', 'enqueue_failed'),
  unclaim: write('finishRun', 'enqueue_failed'),
  discardStream: write('DEL', 'enqueue_failed'),
  failUnqueued: write('failUnqueued', 'enqueue_failed'),
  decideApproval: write('decideApproval', 'resumed'),
  recordToolOutputs: write('recordToolOutputs', 'resumed'),
  requestCancel: write('requestCancel', 'resumed', 'cancelled'),
  /** Worker. */
  admitQueued: write('admitQueued', 'started'),
  claim: write('claim', ...CLAIMS),
  takeAttempt: write('takeAttempt', ...CLAIMS),
  /** The take's first breakpoint (it may find a cancel pending), and the loop's later ones. */
  takeBreakpoint: write('breakpoint', ...CLAIMS, ...STOPS),
  breakpoint: write('breakpoint', ...STOPS),
  rejoin: write('ZADD', 'resumed'),
  requestApprovals: write('requestApprovals', 'parked_for_approval', 'parked_for_client_tools'),
  park: write('park', 'parked_for_approval', 'parked_for_client_tools'),
  parkRun: write('parkRun', 'parked_for_approval', 'parked_for_client_tools', 'resumed'),
  handBack: write('handBack', 'handed_back'),
  finish: write('finishRun', 'succeeded', 'cancelled'),
  release: write('finishRun', 'failed', ...STOPS),
  succeed: write('succeed', 'succeeded'),
  fail: write('fail', 'failed', ...STOPS),
  forget: write('DEL', 'succeeded', 'failed', ...STOPS),
} as const satisfies Record<string, Write>;

/** Runs `call` between the points before and after `write`. */
export async function reaching<T>(points: WritePoints, write: Write, call: () => Promise<T>): Promise<T> {
  points.reach(write, 'before');
  const value = await call();
  points.reach(write, 'after');
  return value;
}
