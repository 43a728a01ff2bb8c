import * as v from 'valibot';
import { RunRecordSchema, type RunRecord } from '../engine/run-records.js';

/** What a model costs (DESIGN §18), as GET /api/admin/model-prices lists it. */
export const ModelPriceSchema = v.strictObject({
  model: v.string(),
  input_per_million: v.number(),
  output_per_million: v.number(),
  updated_at: v.pipe(v.string(), v.isoTimestamp()),
});
export type ModelPrice = v.InferOutput<typeof ModelPriceSchema>;

/** A run as administrators see it: whose it is, and whether its agent is gone since. */
export const AdminRunSchema = v.strictObject({
  ...RunRecordSchema.entries,
  user_id: v.pipe(v.string(), v.uuid()),
  agent_deleted: v.pipe(v.boolean(), v.description("Whether the run's agent has been deleted since (DESIGN §20: its runs stay, agent_id kept); false without an agent")),
});
export type AdminRunRecord = v.InferOutput<typeof AdminRunSchema>;

export const presentAdminRun = (run: RunRecord, user_id: string, agent_deleted: boolean): AdminRunRecord => ({ ...run, user_id, agent_deleted });
