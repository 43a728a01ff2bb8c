import * as v from 'valibot';
import { isJsonObject, outputSchemaShapeProblem } from '../shared/output-schema.js';
import { DOC_MODES } from '../shared/doc-modes.js';
import { MULTITASK_STRATEGIES } from '../shared/multitask.js';
import type { ParameterizedContext } from 'koa';
import { ValidationError, type ValidationIssue } from '../shared/errors.js';
import { MAX_IMAGES_PER_MESSAGE } from '../shared/attachments.js';
import { MAX_JSON_DEPTH, isMarkedStorable } from '../shared/json-text.js';

export { MAX_JSON_DEPTH, markStorable, mayHoldUnstorable } from '../shared/json-text.js';

/** Request validation with valibot, reported in FastAPI's 422 shape (DESIGN §4). */


export type Source = 'body' | 'query' | 'path' | 'header';

const INTEGER_TEXT = /^[+-]?\d{1,15}$/;
/** The largest integer INTEGER_TEXT can spell. */
const SPELLABLE = 10 ** 15 - 1;

/**
 * Query strings, path segments and headers carry text. A schema whose text spells an integer or a
 * boolean says so in its metadata (`spells`), and the OpenAPI document describes that type rather
 * than the text (src/routes/openapi.ts), so generated clients send numbers and booleans, no casts.
 * Metadata is inert at runtime: validation is the pipe's alone.
 */
export type Spelled = { type: 'integer'; minimum: number; maximum: number } | { type: 'boolean' };
export interface SpellsMetadata {
  spells?: Spelled;
}

/** An integer carried as text; its bounds are described in the document as they are checked here. */
export const integerText = ({ min = -SPELLABLE, max = SPELLABLE }: { min?: number; max?: number }) =>
  v.pipe(
    v.string(),
    v.regex(INTEGER_TEXT),
    v.transform(Number),
    v.minValue(min),
    v.maxValue(max),
    v.metadata({ spells: { type: 'integer', minimum: min, maximum: max } satisfies Spelled }),
  );

export const paginationQuery = v.object({
  page: v.optional(integerText({ min: 1 }), '1'),
  size: v.optional(integerText({ min: 1, max: 100 }), '20'),
});
export type { Pagination } from '../shared/pages.js';

export const uuidText = v.pipe(v.string(), v.uuid());

const NOT_A_DECIMAL = 'Input should be a valid number';

/** A JSON number that may have a fraction (a price), finite and within [min, max]; 422s speak of a number, not an integer. */
export const decimal = (min: number, max: number) => v.pipe(v.number(NOT_A_DECIMAL), v.finite(), v.minValue(min), v.maxValue(max));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The spec's `image_ids` (DESIGN §15): file ids separated by commas or spaces (a JSON list is
 * taken too), at most MAX_IMAGES_PER_MESSAGE, each once; every bad one is named.
 */
export const imageIds = v.optional(
  v.nullable(
    v.pipe(
      v.union(
        [v.pipe(v.string(), v.maxLength(4096)), v.pipe(v.array(v.pipe(v.string(), v.maxLength(64))), v.maxLength(100))],
        'image_ids should be file ids in a string, separated by commas or spaces (or a list of them)',
      ),
      v.transform((value) => (typeof value === 'string' ? value.split(/[\s,]+/) : value.map((id) => id.trim())).filter(Boolean)),
      v.rawCheck(({ dataset, addIssue }) => {
        if (!dataset.typed) return;
        const ids = dataset.value;
        if (ids.length > MAX_IMAGES_PER_MESSAGE) addIssue({ message: `at most ${MAX_IMAGES_PER_MESSAGE} images may be attached to a message; ${ids.length} were given` });
        const seen = new Set<string>();
        const repeated = new Set<string>();
        for (const id of ids) {
          const key = id.toLowerCase();
          if (!UUID.test(id)) addIssue({ message: `${JSON.stringify(id.slice(0, 64))} is not a file id` });
          else if (seen.has(key) && !repeated.has(key)) {
            repeated.add(key);
            addIssue({ message: `${id} is given more than once` });
          }
          seen.add(key);
        }
      }),
    ),
  ),
);

function valueAt(root: unknown, keys: unknown[]): unknown {
  let node = root;
  for (const key of keys) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key as string];
  }
  return node;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const quoteList = (options: readonly unknown[]) => {
  const quoted = options.map((o) => `'${String(o)}'`);
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}` : (quoted[0] ?? '');
};

type AnyIssue = v.BaseIssue<unknown> & { requirement?: unknown };

/** valibot names a picklist's options in `expected` as ("a" | "b"). */
const expectedOptions = (expected: string | null) => [...(expected ?? '').matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);

function describe(issue: AnyIssue, missing: boolean): Pick<ValidationIssue, 'type' | 'msg' | 'ctx'> {
  const req = issue.requirement;
  switch (issue.type) {
    case 'object':
    case 'strict_object':
    case 'loose_object':
      if (missing) return { type: 'missing', msg: 'Field required' };
      if (issue.expected === 'never') return { type: 'extra_forbidden', msg: 'Extra inputs are not permitted' };
      return { type: 'model_attributes_type', msg: 'Input should be a valid dictionary or object to extract fields from' };
    case 'string':
      return { type: 'string_type', msg: 'Input should be a valid string' };
    case 'number':
      if (issue.message === NOT_A_DECIMAL) return { type: 'float_type', msg: NOT_A_DECIMAL };
      return { type: 'int_type', msg: 'Input should be a valid integer' };
    case 'finite':
      return { type: 'finite_number', msg: 'Input should be a finite number' };
    case 'integer':
      return { type: 'int_from_float', msg: 'Input should be a valid integer, got a number with a fractional part' };
    case 'boolean':
      return { type: 'bool_type', msg: 'Input should be a valid boolean' };
    case 'array':
      return { type: 'list_type', msg: 'Input should be a valid list' };
    case 'min_value':
      return { type: 'greater_than_equal', msg: `Input should be greater than or equal to ${req}`, ctx: { ge: req } };
    case 'max_value':
      return { type: 'less_than_equal', msg: `Input should be less than or equal to ${req}`, ctx: { le: req } };
    case 'min_length':
      return { type: 'string_too_short', msg: `String should have at least ${plural(Number(req), 'character')}`, ctx: { min_length: req } };
    case 'max_length':
      return { type: 'string_too_long', msg: `String should have at most ${plural(Number(req), 'character')}`, ctx: { max_length: req } };
    case 'picklist': {
      const expected = quoteList(expectedOptions(issue.expected));
      return { type: 'literal_error', msg: `Input should be ${expected}`, ctx: { expected } };
    }
    case 'regex':
      if (req === INTEGER_TEXT) return { type: 'int_parsing', msg: 'Input should be a valid integer, unable to parse string as an integer' };
      return { type: 'string_pattern_mismatch', msg: `String should match pattern '${String(req)}'`, ctx: { pattern: String(req) } };
    case 'uuid':
      return { type: 'uuid_parsing', msg: 'Input should be a valid UUID' };
    case 'iso_timestamp':
      return { type: 'datetime_parsing', msg: 'Input should be a valid datetime' };
    default:
      return { type: 'value_error', msg: `Value error, ${issue.message}` };
  }
}

export function toValidationIssues(issues: AnyIssue[], source: Source, raw: unknown): ValidationIssue[] {
  return issues.map((issue) => {
    const keys = issue.path?.map((p) => p.key) ?? [];
    const missing = issue.received === 'undefined' && keys.length > 0;
    const { type, msg, ctx } = describe(issue, missing);
    const input = missing ? valueAt(raw, keys.slice(0, -1)) : keys.length ? valueAt(raw, keys) : raw;
    const entry: ValidationIssue = { loc: [source, ...(keys as (string | number)[])], msg, type, input };
    if (ctx) entry.ctx = ctx;
    return entry;
  });
}

/** A UTF-16 surrogate without its other half: no UTF-8 form exists, so Postgres refuses the text. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function unstorable(text: string): string | undefined {
  if (text.includes('\u0000')) return 'String should not contain NUL characters';
  if (LONE_SURROGATE.test(text)) return 'String should be valid Unicode: it contains a lone UTF-16 surrogate';
  return undefined;
}

/**
 * Text Postgres cannot store (NUL, lone surrogates: JSON allows both) is refused here, by its
 * place, rather than failing in the database; object keys too (they land in jsonb). Bodies arrive
 * at most MAX_JSON_DEPTH deep (src/http/body.ts refuses deeper JSON); the walk stops there all the same.
 */
function findUnstorable(value: unknown): { path: (string | number)[]; msg: string } | undefined {
  const path: (string | number)[] = [];
  const found = unstorableAt(value, path);
  return found ? { path, msg: found } : undefined;
}

/** The walk of findUnstorable: `path` is the place being looked at, left at the bad one (no allocation per value: bodies may hold many). */
function unstorableAt(value: unknown, path: (string | number)[]): string | undefined {
  if (typeof value === 'string') return unstorable(value);
  if (value === null || typeof value !== 'object' || path.length > MAX_JSON_DEPTH) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const found = unstorableAt(value[i], path);
      if (found) return found;
      path.pop();
    }
    return undefined;
  }
  for (const key in value) {
    path.push(key);
    const keyProblem = unstorable(key);
    if (keyProblem) return keyProblem.replace('String', 'Key');
    const found = unstorableAt((value as Record<string, unknown>)[key], path);
    if (found) return found;
    path.pop();
  }
  return undefined;
}

export function parseInput<S extends v.GenericSchema>(schema: S, raw: unknown, source: Source): v.InferOutput<S> {
  if (raw === undefined && source === 'body') {
    throw new ValidationError([{ loc: ['body'], msg: 'Field required', type: 'missing', input: null }]);
  }
  if (Array.isArray(raw)) {
    const msg = 'Input should be a valid dictionary or object to extract fields from';
    throw new ValidationError([{ loc: [source], msg, type: 'model_attributes_type', input: raw }]);
  }
  const bad = raw !== null && typeof raw === 'object' && isMarkedStorable(raw) ? undefined : findUnstorable(raw);
  if (bad) throw new ValidationError([{ loc: [source, ...bad.path], msg: bad.msg, type: 'string_pattern_mismatch', input: valueAt(raw, bad.path) }]);
  const result = v.safeParse(schema, raw);
  if (result.success) return result.output;
  throw new ValidationError(toValidationIssues(result.issues as AnyIssue[], source, raw));
}

export const validateBody = <S extends v.GenericSchema>(ctx: ParameterizedContext<{ body?: unknown }>, schema: S) =>
  parseInput(schema, ctx.state.body, 'body');

/** `true` or `false` in a query string. */
export const booleanText = v.pipe(
  v.picklist(['true', 'false']),
  v.transform((text) => text === 'true'),
  v.metadata({ spells: { type: 'boolean' } satisfies Spelled }),
);

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 11, 31);

/** A point in time in a query string: an ISO 8601 date (midnight UTC) or date-time with an offset. */
export const instantText = v.pipe(
  v.string(),
  v.maxLength(40),
  v.regex(ISO_INSTANT, 'must be an ISO 8601 date (2026-01-31) or date-time with an offset (2026-01-31T12:00:00Z)'),
  v.transform((text) => new Date(text.length === 10 ? `${text}T00:00:00Z` : text)),
  v.check((at) => at.getTime() >= EARLIEST && at.getTime() <= LATEST, 'must be a real date between 1970 and 9999'),
);

/** The spec's `doc_mode` (DESIGN §14): null or absent = `auto`; another value → 422. */
export const docMode = v.optional(v.nullable(v.picklist(DOC_MODES, 'must be one of "auto", "grounded", "off" (or null)')));

/** What a run does when its conversation already has an active one (DESIGN §19); absent or null: `reject`. */
export const multitaskStrategy = v.optional(
  v.nullable(
    v.pipe(
      v.picklist(MULTITASK_STRATEGIES, 'must be one of "reject", "enqueue", "interrupt", "rollback" (or null)'),
      v.description('When the conversation already has an active run: reject (409, the default), enqueue (start after it), interrupt (stop it, keeping what it said, and start next) or rollback (cancel it and take its question out of the history, then start)'),
    ),
  ),
);

/**
 * DESIGN §23: a JSON Schema the run's final answer must satisfy (≤ 64 KB, ≤ 32 levels, no remote
 * `$ref`, a bounded expansion); a schema that is not is a 422 saying why. Absent or null: prose.
 * Only its shape is checked here, on the event loop; the handler then has it compiled on the CPU
 * pool (`ensureOutputSchemas`).
 */
export const outputSchemaValue = v.nullable(
  v.pipe(
    // Not v.record: it would take an array and hand on an object made of its items.
    v.unknown(),
    v.check(isJsonObject, 'output_schema must be a JSON Schema object'),
    v.check(
      (schema) => outputSchemaShapeProblem(schema) === undefined,
      (issue) => `output_schema ${outputSchemaShapeProblem(issue.input) ?? 'is not a valid JSON Schema'}`,
    ),
    v.transform((schema) => schema as Record<string, unknown>),
  ),
);
export const outputSchema = v.optional(outputSchemaValue);

/** Schemas made by `jsonObject`: the OpenAPI document describes them as objects (a v.custom has no JSON Schema form). */
const jsonObjectSchemas = new WeakSet<object>();
export const isJsonObjectSchema = (schema: object) => jsonObjectSchemas.has(schema);

/**
 * A JSON object, not a list: valibot's record and object schemas take a list too (and hand on an
 * object made of its items), so the check is on the value as sent.
 */
export function jsonObject(message: string) {
  const schema = v.custom<Record<string, unknown>>(isJsonObject, message);
  jsonObjectSchemas.add(schema);
  return schema;
}

/** Where schemas are compiled: the web's CPU pool (src/cpu), or inline. */
export interface SchemaCompiler {
  outputSchemaProblem(schema: unknown): Promise<string | undefined>;
}

/**
 * The second half of an output schema's check: compiled by ajv on the CPU pool, bounded in time
 * (DESIGN §21: CPU work on a caller's input stays off the web's event loop). Each schema that does
 * not compile is a 422 at its place in the body, as the first half's refusals are.
 */
export async function ensureOutputSchemas(cpu: SchemaCompiler, schemas: [loc: (string | number)[], schema: unknown][]): Promise<void> {
  const present = schemas.filter(([, schema]) => schema !== null && schema !== undefined);
  const problems = await Promise.all(present.map(([, schema]) => cpu.outputSchemaProblem(schema)));
  const issues: ValidationIssue[] = [];
  problems.forEach((problem, i) => {
    if (problem) issues.push({ loc: ['body', ...present[i]![0]], msg: `Value error, output_schema ${problem}`, type: 'value_error', input: present[i]![1] });
  });
  if (issues.length > 0) throw new ValidationError(issues);
}
