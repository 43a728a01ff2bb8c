import * as v from 'valibot';
import { described, count, instant, tokenCounts, uuid } from '../shared/record-schemas.js';
import { FINISH_REASONS } from '../shared/events.js';
import { RUN_MODES, RUN_STATUSES } from '../shared/run-statuses.js';
import type { Run } from '../db/models.js';

/** The run record (DESIGN §12) and the answers that accept a run, beside the run store that keeps them. */

export const RunRecordSchema = v.strictObject({
  id: uuid,
  conversation_id: uuid,
  agent_id: v.nullable(uuid),
  agent_version: described(v.nullable(count), 'The version of its agent the run started with and runs on to the end, also after a crash (DESIGN §20); null without an agent'),
  mode: v.picklist(RUN_MODES),
  status: v.picklist(RUN_STATUSES),
  required_action: described(
    v.nullable(v.strictObject({ tool_calls: v.array(v.strictObject({ id: v.string(), name: v.string(), arguments: v.record(v.string(), v.unknown()) })) })),
    "The client tool calls the run waits on while `requires_action` (DESIGN §23): answer them with POST /api/runs/{id}/tool-outputs; null otherwise",
  ),
  query: described(v.nullable(v.string()), 'The question; null once its conversation was deleted (the record stays for usage, without content)'),
  answer: v.nullable(v.string()),
  output: described(v.unknown(), 'DESIGN §23: the answer parsed as JSON, valid against the output schema of the run (or of its agent); null for prose runs'),
  finish_reason: v.nullable(v.picklist(FINISH_REASONS)),
  error: v.nullable(v.strictObject({ code: v.string(), message: v.string() })),
  usage: v.nullable(tokenCounts),
  cost: described(v.nullable(v.number()), "What the run cost at its model's price when it ended (DESIGN §18); null until it ends, or when the model has no price"),
  user_metadata: v.nullable(v.string()),
  trace_id: described(v.nullable(v.string()), 'The OpenTelemetry trace of the run (DESIGN §18): the request that started it, its worker attempts, model and tool calls; null when tracing is off'),
  schedule_id: described(v.nullable(uuid), 'The schedule that started the run (DESIGN §19); null for runs started otherwise'),
  eval_id: described(v.nullable(uuid), 'The eval whose dataset item this run answers (DESIGN §24); null for other runs'),
  created_at: instant,
  started_at: v.nullable(instant),
  finished_at: v.nullable(instant),
});
export type RunRecord = v.InferOutput<typeof RunRecordSchema>;

/** 202 to a cancel: the run stops promptly and ends with `done {status: "cancelled"}`. */
export const CancelAcceptedSchema = v.strictObject({ run_id: uuid, status: v.literal('cancelling') });
/** 202 to a run started without a stream (POST /api/runs, POST /api/schedules/{id}/trigger). */
export const RunAcceptedSchema = v.strictObject({ run_id: uuid, conversation_id: uuid, status: v.literal('queued') });

/** The run as clients see it: no owner, no worker internals. */
export function presentRun(run: Run): RunRecord {
  return {
    id: run.id,
    conversation_id: run.conversation_id,
    agent_id: run.agent_id,
    agent_version: run.agent_version ?? null,
    mode: run.mode,
    status: run.status,
    required_action: run.status === 'requires_action' ? (run.required_action ?? null) : null,
    query: run.query,
    answer: run.answer,
    output: run.output ?? null,
    finish_reason: run.finish_reason,
    error: run.error,
    usage: run.usage,
    cost: run.cost === null || run.cost === undefined ? null : Number(run.cost),
    user_metadata: run.user_metadata,
    trace_id: run.trace_id ?? null,
    schedule_id: run.schedule_id ?? null,
    eval_id: run.eval_id ?? null,
    created_at: run.created_at.toISOString(),
    started_at: run.started_at?.toISOString() ?? null,
    finished_at: run.finished_at?.toISOString() ?? null,
  };
}
