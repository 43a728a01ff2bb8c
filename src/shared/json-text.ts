/** Deeper than any request this API takes; bounds every later walk of the parsed value (validation, error echoes). */
export const MAX_JSON_DEPTH = 64;

/**
 * JSON text can only carry NUL or a lone surrogate as a \u escape (raw control characters are not
 * JSON, and decoded UTF-8 holds no lone surrogate): text without such an escape holds neither.
 */
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;
/** Values parsed from text without such an escape: parseInput need not walk them (a large body's walk is not free). */
const storableValues = new WeakSet<object>();

export const mayHoldUnstorable = (text: string) => UNSTORABLE_ESCAPE.test(text);

/** Records that `value` was parsed from text without such an escape: parseInput skips its walk. */
export function markStorable<T>(value: T): T {
  if (value !== null && typeof value === 'object') storableValues.add(value);
  return value;
}

export const isMarkedStorable = (value: object) => storableValues.has(value);
