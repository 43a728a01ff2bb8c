import * as v from 'valibot';
import { FINAL_RUN_STATUSES } from '../shared/run-statuses.js';
import { tokenCounts } from '../shared/record-schemas.js';

/** The error bodies the API answers with (DESIGN §4), as valibot schemas documented in /openapi.json. */

export const ErrorBody = v.strictObject({ error: v.string(), message: v.string() });
const errorOf = <C extends string>(codes: readonly [C, ...C[]]) => v.strictObject({ error: v.picklist(codes), message: v.string() });
export const AuthErrorBody = errorOf(['unauthorized', 'invalid_token', 'token_expired']);
export const ValidationErrorBody = v.strictObject({
  detail: v.array(
    v.strictObject({
      loc: v.array(v.union([v.string(), v.number()])),
      msg: v.string(),
      type: v.string(),
      input: v.optional(v.unknown()),
      ctx: v.optional(v.record(v.string(), v.unknown())),
    }),
  ),
});
export const InternalErrorBody = v.strictObject({ error: v.literal('internal_error'), message: v.string(), request_id: v.nullable(v.string()) });
/**
 * 410 from GET /api/runs/{id}/events: the finished run's stream has expired; its outcome comes with
 * the error. The outcome fields are optional until every web process sends them (they arrive with
 * the stream-TTL change), then they are always there.
 */
export const GoneBody = v.strictObject({
  error: v.literal('gone'),
  message: v.string(),
  /** A finished run's outcome, so a late re-join still learns it (DESIGN §13). */
  status: v.picklist(FINAL_RUN_STATUSES),
  answer: v.nullable(v.string()),
  usage: v.nullable(tokenCounts),
});

/** The error body of each status. */
export const errorBodies: Record<number, v.GenericSchema> = {
  400: errorOf(['bad_request']),
  401: AuthErrorBody,
  403: errorOf(['forbidden']),
  404: errorOf(['not_found']),
  405: errorOf(['method_not_allowed']),
  409: errorOf(['no_active_execution', 'conversation_busy', 'last_admin', 'endpoint_disabled', 'approval_not_pending', 'schedule_limit', 'not_requires_action', 'tool_output_not_pending', 'dataset_full', 'dataset_limit', 'eval_final', 'memory_limit']),
  410: GoneBody,
  413: errorOf(['payload_too_large']),
  415: errorOf(['unsupported_media_type']),
  422: ValidationErrorBody,
  429: errorOf(['rate_limited', 'insufficient_quota']),
  500: InternalErrorBody,
  // The gateway's verdict on a call the request needed, e.g. model_not_found (DESIGN §6).
  502: v.strictObject({ error: v.string(), message: v.string() }),
  503: v.strictObject({ error: v.literal('unavailable'), message: v.string(), checks: v.optional(v.record(v.string(), v.string())) }),
};
