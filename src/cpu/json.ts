import { jsonDepthExceeds, markStorable, MAX_JSON_DEPTH, mayHoldUnstorable } from '../shared/json-text.js';
import { ValidationError } from '../shared/errors.js';

/**
 * JSON text read where it is cheap to carry back: a thrown error loses its class across threads, so
 * errors are values. `storable`: the text holds no escape of a NUL or a lone surrogate (checked here, off the event loop).
 */
export type ParsedJson = { value: unknown; storable: boolean } | { syntaxError: string } | { tooDeep: true } | { tooManyValues: true };

/**
 * Values a large body may hold: a value parsed on a thread is copied back to the event loop, at
 * about a millisecond per thousand values, so this bounds the copy. Bodies this large are /v1
 * requests (long texts, inline images), which hold a few hundred values.
 */
export const MAX_JSON_VALUES = 20_000;

export function readJson(text: string): ParsedJson {
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) return { tooDeep: true };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { syntaxError: err instanceof Error ? err.message : 'invalid JSON' };
  }
  return valuesWithin(value, MAX_JSON_VALUES) ? { value, storable: !mayHoldUnstorable(text) } : { tooManyValues: true };
}

/** Whether `value` holds at most `limit` values (itself, its items and properties, recursively). */
function valuesWithin(value: unknown, limit: number): boolean {
  let count = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    if (++count > limit) return false;
    const next = pending.pop();
    if (next === null || typeof next !== 'object') continue;
    if (Array.isArray(next)) for (const item of next) pending.push(item);
    else for (const key in next) pending.push((next as Record<string, unknown>)[key]);
  }
  return true;
}

/** The value, or JSON.parse's SyntaxError (its message names the position), or the body reader's 422 for nesting too deep. */
export function valueOf(parsed: ParsedJson): unknown {
  if ('value' in parsed) return parsed.storable ? markStorable(parsed.value) : parsed.value;
  if ('syntaxError' in parsed) throw new SyntaxError(parsed.syntaxError);
  if ('tooManyValues' in parsed) {
    const msg = `JSON body holds more than ${MAX_JSON_VALUES} values`;
    throw new ValidationError([{ loc: ['body'], msg, type: 'json_invalid', input: null, ctx: { error: msg, max_values: MAX_JSON_VALUES } }]);
  }
  const msg = `JSON nested deeper than ${MAX_JSON_DEPTH} levels`;
  throw new ValidationError([{ loc: ['body'], msg, type: 'json_invalid', input: null, ctx: { error: msg, max_depth: MAX_JSON_DEPTH } }]);
}
