/** The engine's vocabulary other modules speak (its facades' arguments and answers), apart from how the engine keeps runs. */
export type { ApprovalDecision, Claim, RunRef } from './run-lease.js';
export type { NewRun, PriorMessage } from './run-store.js';
