import { Superseded } from '../shared/errors.js';

/**
 * What the run's Lua scripts (src/engine/lua) answer, named, and decoded here only (as BullMQ's
 * `ErrorCode` in its scripts.ts). One const object per script: outcome name → the value the script
 * returns for it. Each Lua file's header names the same outcomes; test/engine/transitions.test.ts
 * checks both, and that the scripts answer them in the states the transition table says.
 */
export const ScriptOutcomes = {
  /** claimConversation-5.lua: its first reply element, a string. */
  claimConversation: { claimed: 'claimed', queued: 'queued', busy: 'busy', full: 'full', limit: 'limit', parked_limit: 'parked_limit' },
  admitQueued: { wait: 0, admitted: 1, end: 2 },
  requestCancel: { refused: 0, active: 1, dequeued: 2 },
  /** breakpoint-4.lua: its first reply element. */
  breakpoint: { no_cancel: 0, cancel_pending: 1 },
  /** finishRun-8.lua: its first reply element. */
  finishRun: { inject_waiting: 0, finished: 1, cancel_pending: 2 },
  parkRun: { keep_waiting: 0, wake: 1 },
  decideApproval: { not_pending: 0, recorded: 1, all_decided: 2 },
  /** recordToolOutputs-2.lua: its first reply element. */
  recordToolOutputs: { cancelled: -1, not_pending: 0, recorded: 1, all_answered: 2 },
  holdConversation: { refused: 0, done: 1 },
  takeAttempt: { stale: 0, taken: 1 },
} as const satisfies Record<string, Record<string, number | string>>;

export type OutcomeScript = keyof typeof ScriptOutcomes;
export type ScriptOutcome<S extends OutcomeScript> = keyof (typeof ScriptOutcomes)[S];

/** Error replies a script may give (redis.error_reply), by name. */
export const ScriptErrors = {
  /** publishEvents, requestApprovals, finishRun: another attempt owns the run (its `owner`). */
  superseded: 'SUPERSEDED',
} as const;

/** The scripts that answer ScriptErrors.superseded. */
export const FENCED_SCRIPTS = ['publishEvents', 'requestApprovals', 'finishRun'] as const;

/** A script answered a value its outcomes do not name: the Lua and this file disagree. */
export class UnknownScriptOutcome extends Error {
  constructor(script: string, answer: unknown) {
    super(`${script} answered ${JSON.stringify(answer)}, which names no outcome`);
  }
}

const names = new Map<OutcomeScript, Map<number | string, string>>(
  Object.entries(ScriptOutcomes).map(([script, outcomes]) => [script as OutcomeScript, new Map(Object.entries(outcomes).map(([name, value]) => [value, name]))]),
);

/** The name of a script's answer (a number, or the first element of its reply). */
export function decodeOutcome<S extends OutcomeScript>(script: S, answer: number | string): ScriptOutcome<S> {
  const name = names.get(script)!.get(answer);
  if (name === undefined) throw new UnknownScriptOutcome(script, answer);
  return name as ScriptOutcome<S>;
}

/** A script's error reply as its typed error (Superseded for SUPERSEDED); any other error as it is. */
export function decodeScriptError(err: unknown): unknown {
  return err instanceof Error && err.message.includes(ScriptErrors.superseded) ? new Superseded() : err;
}
