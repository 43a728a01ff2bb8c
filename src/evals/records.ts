import * as v from 'valibot';
import { count, described, instant, uuid } from '../shared/record-schemas.js';
import { RUN_MODES } from '../shared/run-statuses.js';
import { imageIds, jsonObject } from '../http/validation.js';
import { scorerSchema } from './scorers.js';

/** Datasets, their items and evals as the API shows them (DESIGN §24). */

export const QUESTION_MAX_CHARS = 32_000;
/** The most items of one eval that run at once (DESIGN §24: 1–20). */
export const EVAL_CONCURRENCY_MAX = 20;
/** `expected` and `metadata` of one item, as JSON text. */
export const ITEM_FIELD_MAX_BYTES = 16 * 1024;

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? null));
const boundedJson = <T>(what: string) => v.check((value: T) => jsonBytes(value) <= ITEM_FIELD_MAX_BYTES, `${what} is over ${ITEM_FIELD_MAX_BYTES} bytes as JSON`);
/** An item's metadata: a JSON object (valibot's record takes a list, which was stored as {"0": …}). */
const itemMetadata = v.optional(v.nullable(v.pipe(jsonObject('metadata must be a JSON object'), boundedJson<Record<string, unknown>>('metadata'))));

export const itemInputSchema = v.strictObject({
  q: v.pipe(v.string('input.q is the question: a string'), v.trim(), v.minLength(1, 'input.q is empty'), v.maxLength(QUESTION_MAX_CHARS)),
  image_ids: imageIds,
});

/** One item as sent: a question (`input.q`, and images), what a good answer holds, and the caller's own metadata. */
export const newItemSchema = v.strictObject({
  input: itemInputSchema,
  expected: v.optional(v.nullable(v.pipe(v.unknown(), boundedJson('expected')))),
  metadata: itemMetadata,
});
export type NewItem = v.InferOutput<typeof newItemSchema>;

/** An item's input as stored: image ids only when there are some. */
export const inputAsStored = (input: NewItem['input']) => ({ q: input.q, ...(input.image_ids?.length ? { image_ids: input.image_ids } : {}) });

export const itemPatchSchema = v.pipe(
  v.strictObject({
    input: v.optional(itemInputSchema),
    expected: v.optional(v.nullable(v.pipe(v.unknown(), boundedJson('expected')))),
    metadata: itemMetadata,
  }),
  v.check((body) => Object.keys(body).length > 0, 'send at least one field to change'),
);

const storedInput = v.object({ q: v.string(), image_ids: v.optional(v.array(v.string())) });

export const DatasetRecordSchema = v.strictObject({
  id: uuid,
  name: v.string(),
  description: v.string(),
  item_count: count,
  created_at: instant,
  updated_at: instant,
});
export type DatasetRecord = v.InferOutput<typeof DatasetRecordSchema>;

export const DatasetItemRecordSchema = v.strictObject({
  id: uuid,
  dataset_id: uuid,
  input: storedInput,
  expected: v.nullable(v.unknown()),
  metadata: v.record(v.string(), v.unknown()),
  created_at: instant,
  updated_at: instant,
});
export type DatasetItemRecord = v.InferOutput<typeof DatasetItemRecordSchema>;

export const ItemsAddedSchema = v.strictObject({ added: count, item_count: count, items: v.array(DatasetItemRecordSchema) });

export const EVAL_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type EvalStatus = (typeof EVAL_STATUSES)[number];
export const FINAL_EVAL_STATUSES: readonly EvalStatus[] = ['succeeded', 'failed', 'cancelled'];

export const EvalRecordSchema = v.strictObject({
  id: uuid,
  dataset_id: uuid,
  agent_id: uuid,
  agent_version: count,
  mode: v.picklist(RUN_MODES),
  scorers: v.array(scorerSchema),
  concurrency: count,
  status: v.picklist(EVAL_STATUSES),
  progress: described(v.strictObject({ done: count, failed: count, total: count }), 'Items finished (scored, or failed to run) of all; `failed` of them could not be run or their run failed'),
  summary: described(v.record(v.string(), v.nullable(v.number())), "Each scorer's mean score (0..1) over the items done; null before any"),
  pass_rate: v.nullable(v.number()),
  error: v.nullable(v.object({ code: v.string(), message: v.string() })),
  created_at: instant,
  started_at: v.nullable(instant),
  finished_at: v.nullable(instant),
});
export type EvalRecord = v.InferOutput<typeof EvalRecordSchema>;

export const EVAL_ITEM_STATUSES = ['pending', 'running', 'scored', 'failed', 'cancelled'] as const;

export const EvalResultSchema = v.strictObject({
  item_id: uuid,
  run_id: v.nullable(uuid),
  status: v.picklist(EVAL_ITEM_STATUSES),
  input: storedInput,
  expected: v.nullable(v.unknown()),
  output: v.nullable(v.string()),
  scores: v.nullable(v.record(v.string(), v.number())),
  passed: v.nullable(v.boolean()),
  error: v.nullable(v.object({ code: v.string(), message: v.string() })),
});
export type EvalResult = v.InferOutput<typeof EvalResultSchema>;

const side = v.strictObject({ id: uuid, agent_id: uuid, agent_version: count, status: v.picklist(EVAL_STATUSES), summary: v.record(v.string(), v.nullable(v.number())) });
const tally = v.strictObject({ wins: count, losses: count, ties: count });
export const EvalComparisonSchema = v.strictObject({
  dataset_id: uuid,
  a: side,
  b: side,
  /** Per scorer both evals have: each one's mean over the items both scored, and per item whether a beat b. */
  scorers: v.record(v.string(), v.strictObject({ a: v.nullable(v.number()), b: v.nullable(v.number()), ...tally.entries })),
  /** Per item both scored, by the mean of the shared scorers: a's wins, losses and ties against b. */
  items: v.strictObject({ compared: count, ...tally.entries }),
});
export type EvalComparison = v.InferOutput<typeof EvalComparisonSchema>;
