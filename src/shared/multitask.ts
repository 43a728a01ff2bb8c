/**
 * What a new run does when its conversation already has an active one (DESIGN §19, LangGraph's
 * double-texting): `reject` (409 conversation_busy), `enqueue` (start when the runs before it end),
 * `interrupt` (stop the active run, keeping what it said, and start next), `rollback` (cancel the
 * active run, take its question and partial answer out of the history, and start next).
 */
export const MULTITASK_STRATEGIES = ['reject', 'enqueue', 'interrupt', 'rollback'] as const;
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

/** Why a run was told to stop: its cancel flag's value (a person's cancel is '1'). */
export type StopKind = 'cancel' | 'interrupt' | 'rollback';
export const stopKindOf = (flag: string | null | undefined): StopKind | undefined =>
  flag == null ? undefined : flag === 'interrupt' || flag === 'rollback' ? flag : 'cancel';
