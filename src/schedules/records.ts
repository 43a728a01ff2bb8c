import * as v from 'valibot';
import { count, described, instant, uuid } from '../shared/record-schemas.js';
import { SKIP_REASONS, type Schedule } from '../db/schedule-models.js';
import { RUN_MODES } from '../shared/run-statuses.js';

export const ScheduleRecordSchema = v.strictObject({
  id: uuid,
  name: v.string(),
  agent_id: v.nullable(uuid),
  mode: v.picklist(RUN_MODES),
  q: v.string(),
  cron: described(v.nullable(v.string()), '5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, read in `timezone`; null when every_seconds is set'),
  every_seconds: described(v.nullable(count), 'Seconds between runs, the first one interval after it is set; null when cron is set'),
  timezone: described(v.string(), 'The IANA time zone the cron is read in (DST follows it)'),
  conversation_id: described(v.nullable(uuid), 'The conversation every run continues; null: each run starts a new one'),
  enabled: v.boolean(),
  next_run_at: described(v.nullable(instant), 'When the next tick is planned; null while disabled'),
  last_run_at: v.nullable(instant),
  last_run_id: v.nullable(uuid),
  skipped_runs: described(count, "Ticks that started no run: the conversation's previous run still active, the active-run cap, a spent token budget, or the agent or conversation gone"),
  last_skip_reason: described(v.nullable(v.picklist(SKIP_REASONS)), 'Why the last skipped tick started no run'),
  created_at: instant,
  updated_at: instant,
});
export type ScheduleRecord = v.InferOutput<typeof ScheduleRecordSchema>;

const iso = (at: Date | null) => at?.toISOString() ?? null;

/** The schedule as its owner sees it. */
export function presentSchedule(schedule: Schedule): ScheduleRecord {
  return {
    id: schedule.id,
    name: schedule.name,
    agent_id: schedule.agent_id,
    mode: schedule.mode,
    q: schedule.q,
    cron: schedule.cron,
    every_seconds: schedule.every_seconds,
    timezone: schedule.timezone,
    conversation_id: schedule.conversation_id,
    enabled: schedule.enabled,
    next_run_at: iso(schedule.next_run_at),
    last_run_at: iso(schedule.last_run_at),
    last_run_id: schedule.last_run_id,
    skipped_runs: schedule.skipped_runs,
    last_skip_reason: schedule.last_skip_reason,
    created_at: schedule.created_at.toISOString(),
    updated_at: schedule.updated_at.toISOString(),
  };
}
