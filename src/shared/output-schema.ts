import { createHash } from 'node:crypto';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';

/**
 * Structured outputs (DESIGN §23): the JSON Schema a run's final answer must satisfy, checked when
 * it is given (agents, native run bodies, /v1's response_format and text.format) and compiled once
 * per schema where answers are validated (workers).
 */

/** What a run's final answer must be: JSON valid against a schema, or (OpenAI's json_object) any JSON object. */
export type OutputFormat = { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict: boolean; description?: string } | { type: 'json_object' };

export const OUTPUT_SCHEMA_MAX_BYTES = 64 * 1024;
/** Deeper nesting than this is refused: no useful schema needs it, and walking it must stay cheap. */
export const OUTPUT_SCHEMA_MAX_DEPTH = 32;
/** The name a schema given without one (agents, native runs) is sent to models under. */
export const DEFAULT_SCHEMA_NAME = 'output';

/** The format an agent's or a native run's `output_schema` stands for. */
export const schemaFormat = (schema: Record<string, unknown>): OutputFormat => ({ type: 'json_schema', name: DEFAULT_SCHEMA_NAME, schema, strict: false });

export const isJsonObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isObject = isJsonObject;

const addFormats = ((formatsModule as unknown as { default?: unknown }).default ?? formatsModule) as (ajv: Ajv2020) => Ajv2020;

function newAjv(): Ajv2020 {
  // strict off: schemas written for other validators carry keywords ajv does not know (nullable, propertyOrdering…);
  // a keyword of the wrong type is still refused by the meta-schema.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  return addFormats(ajv);
}

/** Ajv keeps every compiled schema; a fresh instance per batch of compiles keeps that memory bounded. */
let ajv = newAjv();
let compiledByAjv = 0;
const AJV_RECYCLE_AFTER = 500;

/** The schema ajv is given: `$schema` is dropped (every schema is read as draft 2020-12, whatever draft it names). */
function forAjv(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _draft, $id: _id, ...rest } = schema;
  return rest;
}

function compile(schema: Record<string, unknown>): ValidateFunction {
  if (++compiledByAjv > AJV_RECYCLE_AFTER) {
    ajv = newAjv();
    compiledByAjv = 1;
  }
  return ajv.compile(forAjv(schema));
}

/** A `$ref` that leaves the schema (a URL or another file): never fetched, so refused. */
const isRemoteRef = (ref: unknown) => typeof ref === 'string' && !ref.startsWith('#');

/** Walks the schema without recursion: its depth and its `$ref`s. */
function structureProblem(schema: Record<string, unknown>): string | undefined {
  const stack: [unknown, number][] = [[schema, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > OUTPUT_SCHEMA_MAX_DEPTH) return `is nested deeper than ${OUTPUT_SCHEMA_MAX_DEPTH} levels`;
    if (Array.isArray(node)) {
      for (const item of node) stack.push([item, depth + 1]);
    } else if (isObject(node)) {
      if (isRemoteRef(node.$ref) || isRemoteRef(node.$dynamicRef)) return `has a remote $ref (${String(node.$ref ?? node.$dynamicRef).slice(0, 100)}); only references inside the schema (#/$defs/…) are allowed`;
      for (const value of Object.values(node)) stack.push([value, depth + 1]);
    }
  }
  return undefined;
}

/**
 * Why `schema` cannot be an output schema, or undefined when it can: a JSON object of at most
 * 64 KB, at most 32 levels deep, no remote `$ref`, and one the validator compiles.
 */
export function outputSchemaProblem(schema: unknown): string | undefined {
  if (!isObject(schema)) return 'must be a JSON Schema object';
  if (Buffer.byteLength(JSON.stringify(schema)) > OUTPUT_SCHEMA_MAX_BYTES) return `is larger than ${OUTPUT_SCHEMA_MAX_BYTES / 1024} KB`;
  const structure = structureProblem(schema);
  if (structure) return structure;
  try {
    validatorFor(schema);
  } catch (err) {
    return `is not a valid JSON Schema: ${(err as Error).message.slice(0, 300)}`;
  }
  return undefined;
}

/** Compiled validators by the schema's hash: a run's schema is compiled once per process, however many answers it checks. */
const cache = new Map<string, ValidateFunction>();
const CACHE_MAX = 256;

function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  const key = createHash('sha256').update(JSON.stringify(schema)).digest('hex');
  const cached = cache.get(key);
  if (cached) return cached;
  const validate = compile(schema);
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(key, validate);
  return validate;
}

/** `text`: the answer's JSON text (without a Markdown fence the model may have put around it). */
export type OutputCheck = { ok: true; output: unknown; text: string } | { ok: false; errors: string[] };

const MAX_REPORTED_ERRORS = 10;
const describe = (error: ErrorObject) => `${error.instancePath || '(root)'} ${error.message ?? 'is invalid'}`;

/** The answer's text parsed as JSON and checked against the format; the problems (at most 10) when it is not valid. */
export function checkOutput(format: OutputFormat, text: string): OutputCheck {
  let output: unknown;
  const json = withoutCodeFence(text).trim();
  try {
    output = JSON.parse(json);
  } catch (err) {
    return { ok: false, errors: [`the answer is not JSON: ${(err as Error).message.slice(0, 200)}`] };
  }
  if (format.type === 'json_object') return isObject(output) ? { ok: true, output, text: json } : { ok: false, errors: ['(root) must be a JSON object'] };
  const validate = validatorFor(format.schema);
  if (validate(output)) return { ok: true, output, text: json };
  return { ok: false, errors: (validate.errors ?? []).slice(0, MAX_REPORTED_ERRORS).map(describe) };
}

/** Models that ignore the structured-output parameter often wrap their JSON in a Markdown fence; the fence is not the answer. */
function withoutCodeFence(text: string): string {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(text);
  return fenced ? fenced[1]! : text;
}
