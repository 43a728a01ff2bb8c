import type { Knex } from 'knex';
import type { Usage } from '../src/shared/events.js';
import type { ChatMessage, PlanNode } from './models/types.js';

/** ReAct: the next iteration to run and the conversation the model sees. */
export interface ReactState {
  kind: 'react';
  iteration: number;
  messages: ChatMessage[];
}

/** DAG: the plan, the outputs of the nodes that finished, the injects absorbed so far. */
export interface DagState {
  kind: 'dag';
  plan: PlanNode[];
  outputs: Record<string, string>;
  injected: ChatMessage[];
  wave: number;
}

export type LoopState = ReactState | DagState;

/**
 * What a run saves after every iteration (ReAct) or finished node (DAG) and resumes from:
 * the loop's state, usage so far, the last event number per scope, and the injects absorbed.
 */
export interface Checkpoint {
  version: 1;
  loop: LoopState;
  usage: Usage;
  seqs: Record<string, number>;
  absorbed: string[];
}

export function readCheckpoint(value: unknown): Checkpoint | undefined {
  const candidate = value as Partial<Checkpoint> | null | undefined;
  return candidate?.version === 1 && candidate.loop ? (candidate as Checkpoint) : undefined;
}

/** This attempt no longer owns the run: a newer attempt took it over (a stalled lock). */
export class Superseded extends Error {
  constructor() {
    super('a newer attempt owns this run');
  }
}

/** Writes checkpoints in the order they were taken, fenced by the attempt that owns the run. */
export class CheckpointWriter {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly knex: Knex,
    private readonly runId: string,
    private readonly attempt: number,
  ) {}

  save(checkpoint: Checkpoint): Promise<void> {
    const json = JSON.stringify(checkpoint);
    const write = this.chain.then(async () => {
      const updated = await this.knex('runs').update({ checkpoint: json }).where({ id: this.runId, attempt: this.attempt });
      if (updated === 0) throw new Superseded();
    });
    this.chain = write.catch(() => {});
    return write;
  }
}
