import * as v from 'valibot';

/** One entry of the audit log as administrators read it (GET /api/admin/audit-log). */
export const AuditRecordSchema = v.strictObject({
  id: v.number(),
  at: v.pipe(v.string(), v.isoTimestamp()),
  actor_user_id: v.nullable(v.string()),
  credential: v.nullable(v.string()),
  action: v.string(),
  target_type: v.nullable(v.string()),
  target_id: v.nullable(v.string()),
  ip: v.nullable(v.string()),
  request_id: v.nullable(v.string()),
  details: v.record(v.string(), v.unknown()),
});
export type AuditRecord = v.InferOutput<typeof AuditRecordSchema>;
