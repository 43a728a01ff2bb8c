/**
 * A run's states (DESIGN §5, §11, §19, §23), the last four final, and its modes. `requires_action`: parked for the client's tool outputs.
 * How a run moves between them is src/engine/transitions.ts (src/db, below the engine, reads these lists; a test checks they agree with it).
 */
export const RUN_STATUSES = ['queued', 'running', 'waiting', 'requires_action', 'succeeded', 'failed', 'cancelled', 'interrupted'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const FINAL_RUN_STATUSES = ['succeeded', 'failed', 'cancelled', 'interrupted'] as const;
export type FinalRunStatus = (typeof FINAL_RUN_STATUSES)[number];

/** How a run plans its work (DESIGN §5): a ReAct loop, or a DAG of nodes. */
export const RUN_MODES = ['react', 'dag'] as const;
export type RunMode = (typeof RUN_MODES)[number];

/** A run parked without a worker: waiting for a person's approval, or for its client's tool outputs (DESIGN §11, §23). */
export const PARKED_RUN_STATUSES = ['waiting', 'requires_action'] as const;
export const isParked = (status: string): boolean => (PARKED_RUN_STATUSES as readonly string[]).includes(status);
