import { createHash } from 'node:crypto';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { linearRegExp, LinearPatternError } from './linear-regexp.js';
import { withinTime } from './time-bound.js';

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
/**
 * Subschemas a schema may expand to with every `$ref` replaced by its target (a recursive `$ref`
 * counted once): what validating, filling and compiling it walk. A schema's bytes do not bound its
 * work (150 properties referencing a definition of 150 are 22,650 subschemas in 8 KB; an `allOf`
 * chain doubles with each link), this does. OpenAI's structured outputs allow 5,000 properties.
 */
export const OUTPUT_SCHEMA_MAX_EXPANDED = 10_000;
/** Nesting with `$ref`s followed (a chain of definitions each referencing the next). */
export const OUTPUT_SCHEMA_MAX_EXPANDED_DEPTH = 2 * OUTPUT_SCHEMA_MAX_DEPTH;
/** How long compiling one schema may take before it is refused (off the event loop: the CPU pool's threads). */
export const OUTPUT_SCHEMA_COMPILE_MS = 2_000;
/** How long validating one answer may take before it counts as invalid. */
export const OUTPUT_VALIDATION_MS = 100;
/** The name a schema given without one (agents, native runs) is sent to models under. */
export const DEFAULT_SCHEMA_NAME = 'output';

/** The format an agent's or a native run's `output_schema` stands for. */
export const schemaFormat = (schema: Record<string, unknown>): OutputFormat => ({ type: 'json_schema', name: DEFAULT_SCHEMA_NAME, schema, strict: false });

export const isJsonObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isObject = isJsonObject;

const addFormats = ((formatsModule as unknown as { default?: unknown }).default ?? formatsModule) as (ajv: Ajv2020) => Ajv2020;

function newAjv(): Ajv2020 {
  // strict off: schemas written for other validators carry keywords ajv does not know (nullable, propertyOrdering…);
  // a keyword of the wrong type is still refused by the meta-schema. inlineRefs off: a `$ref` is a call to its
  // target's function, compiled once, not a copy of the target at each use (150 uses of 150 properties were 22,500
  // checks). Patterns run on a linear-time engine: no pattern backtracks on an answer.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true, inlineRefs: false, code: { regExp: linearRegExp } });
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

/** Compiled within OUTPUT_SCHEMA_COMPILE_MS; a compile stopped half-way leaves ajv's registry unknown, so it is recycled. */
function compile(schema: Record<string, unknown>): ValidateFunction {
  if (++compiledByAjv > AJV_RECYCLE_AFTER) {
    ajv = newAjv();
    compiledByAjv = 1;
  }
  const compiling = ajv;
  const compiled = withinTime(OUTPUT_SCHEMA_COMPILE_MS, () => compiling.compile(forAjv(schema)));
  if (compiled.done) return compiled.value;
  ajv = newAjv();
  compiledByAjv = 0;
  throw new SchemaTooCostly(`took longer than ${OUTPUT_SCHEMA_COMPILE_MS} ms to compile`);
}

/** A schema refused for the work it causes rather than for what it says. */
class SchemaTooCostly extends Error {}

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
  return expansionProblem(schema);
}

/** Keywords whose values are data, not subschemas: bounded by the schema's bytes, never expanded. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'required', '$comment', 'description', 'title']);
/** Definitions are walked where a `$ref` names them, not where they stand. */
const DEFINITION_KEYWORDS = new Set(['$defs', 'definitions']);

/**
 * The schema's size and depth with every local `$ref` followed (each target counted once per
 * target, memoised; a `$ref` back into its own expansion — a recursive schema — counts once),
 * stopping as soon as a bound is passed. Linear in the schema's own size.
 */
function expansionProblem(root: Record<string, unknown>): string | undefined {
  const sizes = new Map<object, number>();
  const expanding = new Set<object>();
  let deepest = 0;
  const over = OUTPUT_SCHEMA_MAX_EXPANDED + 1;
  const size = (node: unknown, depth: number): number => {
    if (depth > deepest) deepest = depth;
    if (depth > OUTPUT_SCHEMA_MAX_EXPANDED_DEPTH) return over;
    if (Array.isArray(node)) {
      let total = 0;
      for (const item of node) if ((total += size(item, depth + 1)) >= over) return over;
      return total;
    }
    if (!isObject(node)) return 0;
    let total = 1;
    if (typeof node.$ref === 'string') total += referenced(localTarget(root, node.$ref), depth);
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key) || DEFINITION_KEYWORDS.has(key)) continue;
      if ((total += size(value, depth + 1)) >= over) return over;
    }
    return total;
  };
  const referenced = (target: unknown, depth: number): number => {
    if (!isObject(target) || expanding.has(target)) return 1;
    const known = sizes.get(target);
    if (known !== undefined) return known;
    expanding.add(target);
    const counted = size(target, depth + 1);
    expanding.delete(target);
    sizes.set(target, counted);
    return counted;
  };
  const total = size(root, 1);
  if (deepest > OUTPUT_SCHEMA_MAX_EXPANDED_DEPTH) return `nests deeper than ${OUTPUT_SCHEMA_MAX_EXPANDED_DEPTH} levels when its $refs are followed`;
  if (total >= over) return `expands to more than ${OUTPUT_SCHEMA_MAX_EXPANDED} subschemas when its $refs are followed (a definition referenced from many places counts at each use): validating it would cost too much`;
  return undefined;
}

/** `#/$defs/Name` (a JSON pointer, with ~0 and ~1 escapes, percent-encoded) inside the root schema; `#` is the root. */
export function localTarget(root: Record<string, unknown>, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (!isObject(node) && !Array.isArray(node)) return undefined;
    if (!Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * Why `schema` cannot be an output schema by its shape alone, or undefined: a JSON object of at
 * most 64 KB, at most 32 levels deep, no remote `$ref`, and at most OUTPUT_SCHEMA_MAX_EXPANDED
 * subschemas with its `$ref`s followed. Linear in the schema's size: cheap enough for the event loop.
 */
export function outputSchemaShapeProblem(schema: unknown): string | undefined {
  if (!isObject(schema)) return 'must be a JSON Schema object';
  if (Buffer.byteLength(JSON.stringify(schema)) > OUTPUT_SCHEMA_MAX_BYTES) return `is larger than ${OUTPUT_SCHEMA_MAX_BYTES / 1024} KB`;
  return structureProblem(schema);
}

/**
 * Why `schema` cannot be an output schema, or undefined when it can: its shape (above), and one
 * the validator compiles within OUTPUT_SCHEMA_COMPILE_MS, every pattern one the linear-time engine
 * takes. Compiling is CPU work on a caller's input: the web runs this on its CPU pool (src/cpu).
 */
export function outputSchemaProblem(schema: unknown): string | undefined {
  const shape = outputSchemaShapeProblem(schema);
  if (shape) return shape;
  try {
    validatorFor(schema as Record<string, unknown>);
  } catch (err) {
    if (err instanceof SchemaTooCostly) return err.message;
    if (err instanceof LinearPatternError) return err.message;
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
  const checked = withinTime(OUTPUT_VALIDATION_MS, () => validate(output));
  if (!checked.done) return { ok: false, errors: [`validating the answer took longer than ${OUTPUT_VALIDATION_MS} ms`] };
  if (checked.value) return { ok: true, output, text: json };
  return { ok: false, errors: (validate.errors ?? []).slice(0, MAX_REPORTED_ERRORS).map(describe) };
}

/** Models that ignore the structured-output parameter often wrap their JSON in a Markdown fence; the fence is not the answer. */
function withoutCodeFence(text: string): string {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(text);
  return fenced ? fenced[1]! : text;
}
