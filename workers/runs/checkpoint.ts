import type { Citation, Usage } from '../../src/shared/events.js';
import type { ChatMessage, PlanNode, ToolCall } from '../models/types.js';

/** ReAct: the next iteration to run and the conversation the model sees. */
export interface ReactState {
  kind: 'react';
  iteration: number;
  messages: ChatMessage[];
  /** The iteration's tool calls, when they wait for approval (DESIGN §11): run on resume. */
  pending?: ToolCall[];
}

/** DAG: the plan, the outputs of the nodes that finished, the injects absorbed so far. */
export interface DagState {
  kind: 'dag';
  plan: PlanNode[];
  outputs: Record<string, string>;
  injected: ChatMessage[];
  wave: number;
  /** The knowledge-base passages each finished node's output used. */
  citations?: Record<string, Citation[]>;
  /**
   * Nodes parked on tool calls (approvals, client outputs): their transcript up to the calls they
   * wait on and the step they were at, so a resumed node goes on from there rather than asking its
   * model again (a model that is not deterministic would make new calls, with new ids).
   */
  parked?: Record<string, ParkedNode>;
}

export interface ParkedNode {
  messages: ChatMessage[];
  step: number;
}

export type LoopState = ReactState | DagState;

/**
 * What a run saves after every iteration (ReAct) or finished node (DAG) and resumes from:
 * the loop's state, usage so far, the last event number per scope, and the injects absorbed.
 */
export interface Checkpoint {
  version: 1;
  /** Absent in the checkpoint a compaction saves (DESIGN §20) before the loop's first step. */
  loop?: LoopState;
  /** The run compacted its conversation's history (its summary is stored): a resumed attempt does not again. */
  compacted?: true;
  usage: Usage;
  seqs: Record<string, number>;
  absorbed: string[];
  /** Time spent running so far (RUN_MAX_DURATION_S counts it; waiting for approval does not). */
  activeMs?: number;
}

export function readCheckpoint(value: unknown): Checkpoint | undefined {
  const candidate = value as Partial<Checkpoint> | null | undefined;
  return candidate?.version === 1 && (candidate.loop || candidate.compacted) ? (candidate as Checkpoint) : undefined;
}

/** Where checkpoints are kept: the run's row (WorkerEngine.saveCheckpoint), fenced by the attempt. */
export interface CheckpointStore {
  saveCheckpoint(runId: string, attempt: number, checkpoint: string): Promise<void>;
}

/** Writes checkpoints in the order they were taken, fenced by the attempt that owns the run. */
export class CheckpointWriter {
  private chain: Promise<void>;

  constructor(
    private readonly store: CheckpointStore,
    private readonly runId: string,
    private readonly attempt: number,
    /** The attempt's claim: checkpoints are written after it. */
    claimed: Promise<void>,
  ) {
    this.chain = claimed;
  }

  save(checkpoint: Checkpoint): Promise<void> {
    const json = JSON.stringify(checkpoint);
    const write = this.chain.then(() => this.store.saveCheckpoint(this.runId, this.attempt, json));
    this.chain = write.catch(() => {});
    return write;
  }
}
