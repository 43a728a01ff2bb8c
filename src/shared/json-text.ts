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

/**
 * Bodies up to this many characters (the default BODY_LIMIT_BYTES) are parsed on the event loop:
 * the value parsed on a thread is copied back onto it (structured clone), which for a megabyte of
 * small values costs two to three times the parse itself.
 */
export const INLINE_JSON_MAX_CHARS = 1024 * 1024;

/** The deepest nesting of arrays and objects in JSON text, counted without parsing (strings skipped), stopping past `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** A body's UTF-8 bytes as text, without the byte-order mark some clients put first (JSON.parse refuses it). */
export function utf8Text(bytes: Uint8Array, length = bytes.byteLength): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, length).toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
