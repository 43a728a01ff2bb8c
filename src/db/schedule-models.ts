import { Model } from 'objection';
import type { RunMode } from '../shared/run-statuses.js';

/** Why a tick started no run (DESIGN §19); the record's `last_skip_reason`. */
export const SKIP_REASONS = ['conversation_busy', 'active_run_limit', 'insufficient_quota', 'agent_deleted', 'conversation_deleted', 'unavailable'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

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
}
