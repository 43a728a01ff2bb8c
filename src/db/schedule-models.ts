import { Model } from 'objection';
import type { RunMode } from '../shared/run-statuses.js';

/** Why a tick started no run (DESIGN §19); the record's `last_skip_reason`. */
export const SKIP_REASONS = ['conversation_busy', 'active_run_limit', 'insufficient_quota', 'agent_deleted', 'conversation_deleted', 'unavailable'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

const iso = (at: Date | null) => at?.toISOString() ?? null;

/** A run that starts itself (DESIGN §19): on a cron (in `timezone`) or every `every_seconds`. */
export class Schedule extends Model {
  static override tableName = 'schedules';
  id!: string;
  user_id!: string;
  name!: string;
  agent_id!: string | null;
  mode!: RunMode;
  q!: string;
  cron!: string | null;
  every_seconds!: number | null;
  timezone!: string;
  /** Null: each tick starts a new conversation. */
  conversation_id!: string | null;
  user_metadata!: string | null;
  enabled!: boolean;
  next_run_at!: Date | null;
  last_run_at!: Date | null;
  last_run_id!: string | null;
  /** The planned instant of the last tick a worker took (the fence against taking one twice). */
  last_tick_at!: Date | null;
  skipped_runs!: number;
  last_skip_reason!: SkipReason | null;
  created_at!: Date;
  updated_at!: Date;

  /** The schedule as its owner sees it. */
  toPublic() {
    return {
      id: this.id,
      name: this.name,
      agent_id: this.agent_id,
      mode: this.mode,
      q: this.q,
      cron: this.cron,
      every_seconds: this.every_seconds,
      timezone: this.timezone,
      conversation_id: this.conversation_id,
      enabled: this.enabled,
      next_run_at: iso(this.next_run_at),
      last_run_at: iso(this.last_run_at),
      last_run_id: this.last_run_id,
      skipped_runs: this.skipped_runs,
      last_skip_reason: this.last_skip_reason,
      created_at: this.created_at.toISOString(),
      updated_at: this.updated_at.toISOString(),
    };
  }
}
