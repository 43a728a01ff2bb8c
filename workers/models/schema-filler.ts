import { localTarget } from '../../src/shared/output-schema.js';

/**
 * The local model's deterministic JSON Schema filler (DESIGN §23): a structured answer, or a client
 * function's arguments, made from what the model has — a text and the number it states.
 * number/integer ← the number, string ← the text, boolean ← true, enum/const ← the first value,
 * array ← one item, object ← every property, recursively; `$ref` (local), `allOf` (merged),
 * `anyOf`/`oneOf` (the first branch) and type lists (the first non-null type) are followed.
 */

export interface FillSeed {
  /** What string fields get. */
  text: string;
  /** What number and integer fields get (0 when there is none). */
  number?: number;
}

type Schema = Record<string, unknown>;

/** Deeper than this, a value is null: a recursive schema (a tree through `$ref`) must end somewhere. */
const MAX_DEPTH = 32;
/** Past this many values, objects and arrays are left empty: a schema of thousands of properties stays cheap. */
const MAX_VALUES = 2_000;
/**
 * Subschemas followed (`$ref`s, `allOf` parts) in one fill: an `allOf` chain doubles with each link,
 * and a schema stored before the edge bounded its expansion must not hold the worker either.
 */
const MAX_STEPS = 20_000;

export function fillSchema(schema: unknown, seed: FillSeed): unknown {
  const filler = new Filler(isSchema(schema) ? schema : {}, seed);
  return filler.fill(schema, 0);
}

/** The last number a text states ("The result of 6*7 is 42." → 42), if any. */
export function lastNumberIn(text: string): number | undefined {
  const matches = text.match(/-?\d+(?:\.\d+)?(?:e[+-]?\d+)?/gi);
  const last = matches?.at(-1);
  return last === undefined ? undefined : Number(last);
}

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

class Filler {
  private made = 0;
  private steps = 0;

  constructor(
    private readonly root: Schema,
    private readonly seed: FillSeed,
  ) {}

  fill(schema: unknown, depth: number): unknown {
    if (schema === true || schema === undefined) return this.seed.text;
    if (!isSchema(schema) || depth > MAX_DEPTH || ++this.made > MAX_VALUES) return null;
    const resolved = this.resolve(schema, depth);
    if ('const' in resolved) return resolved.const;
    if (Array.isArray(resolved.enum) && resolved.enum.length > 0) return resolved.enum[0];
    const branches = (resolved.anyOf ?? resolved.oneOf) as unknown;
    if (Array.isArray(branches) && branches.length > 0) return this.fill(branches.find((b) => !isNullSchema(b)) ?? branches[0], depth + 1);
    switch (typeOf(resolved)) {
      case 'object':
        return this.object(resolved, depth);
      case 'array':
        return this.made < MAX_VALUES ? [this.fill(resolved.items ?? (resolved.prefixItems as unknown[] | undefined)?.[0], depth + 1)] : [];
      case 'number':
        return this.seed.number ?? 0;
      case 'integer':
        return Math.trunc(this.seed.number ?? 0);
      case 'boolean':
        return true;
      case 'null':
        return null;
      default:
        return this.seed.text;
    }
  }

  private object(schema: Schema, depth: number): Record<string, unknown> {
    const value: Record<string, unknown> = {};
    const properties = isSchema(schema.properties) ? schema.properties : {};
    for (const [name, property] of Object.entries(properties)) {
      if (this.made >= MAX_VALUES) break;
      value[name] = this.fill(property, depth + 1);
    }
    return value;
  }

  /** A local `$ref` followed and `allOf` merged into one schema (a remote `$ref` is refused at the edge). */
  private resolve(schema: Schema, depth: number): Schema {
    if (++this.steps > MAX_STEPS) return {};
    let current = schema;
    for (let hops = 0; typeof current.$ref === 'string' && hops < MAX_DEPTH; hops++) {
      const target = localTarget(this.root, current.$ref);
      if (!isSchema(target)) return {};
      const { $ref: _ref, ...rest } = current;
      current = { ...target, ...rest };
    }
    if (Array.isArray(current.allOf) && depth < MAX_DEPTH) {
      const merged: Schema = { ...current, allOf: undefined };
      for (const part of current.allOf) {
        if (!isSchema(part)) continue;
        const resolved = this.resolve(part, depth + 1);
        merged.properties = { ...(isSchema(merged.properties) ? merged.properties : {}), ...(isSchema(resolved.properties) ? resolved.properties : {}) };
        merged.type ??= resolved.type;
      }
      return merged;
    }
    return current;
  }
}

function typeOf(schema: Schema): string | undefined {
  const { type } = schema;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return (type.find((t) => t !== 'null') ?? type[0]) as string | undefined;
  if (isSchema(schema.properties)) return 'object';
  if (schema.items !== undefined) return 'array';
  return undefined;
}

const isNullSchema = (schema: unknown) => isSchema(schema) && schema.type === 'null';
