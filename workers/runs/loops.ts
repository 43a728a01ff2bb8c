import type { RunMode } from '../../src/shared/run-statuses.js';
import type { ChatMessage } from '../models/types.js';
import type { LoopState } from './checkpoint.js';
import type { LoopOutcome, RunContext } from './run-context.js';
import { runDag } from './dag.js';
import { runReact } from './react.js';

/** A kind of run: its loop, from the history, resuming from its checkpointed state when it has one of its own kind. */
export type RunLoop = (ctx: RunContext, history: ChatMessage[], resumed: LoopState | undefined) => Promise<LoopOutcome>;

/** The loops by mode (RUN_MODES): a new kind of run is its loop's file and one line here. */
export const LOOPS: Record<RunMode, RunLoop> = {
  react: (ctx, history, resumed) => runReact(ctx, history, resumed?.kind === 'react' ? resumed : undefined),
  dag: (ctx, history, resumed) => runDag(ctx, history, resumed?.kind === 'dag' ? resumed : undefined),
};
