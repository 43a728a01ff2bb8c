/** The engine's vocabulary other modules speak (its facades' arguments and answers), apart from how the engine keeps runs. */
export type { ApprovalDecision, Claim, RunRef } from './protocol-types.js';
export type { NewRun, PriorMessage } from './run-store.js';
