/** A run's states (DESIGN §5, §11, §19), the last four final, and its modes. */
export const RUN_STATUSES = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled', 'interrupted'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const FINAL_RUN_STATUSES = ['succeeded', 'failed', 'cancelled', 'interrupted'] as const;
export type FinalRunStatus = (typeof FINAL_RUN_STATUSES)[number];

/** How a run plans its work (DESIGN §5): a ReAct loop, or a DAG of nodes. */
export const RUN_MODES = ['react', 'dag'] as const;
export type RunMode = (typeof RUN_MODES)[number];
