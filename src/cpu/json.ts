import { jsonDepthExceeds } from '../http/body.js';
import { MAX_JSON_DEPTH } from '../http/validation.js';
import { ValidationError } from '../shared/errors.js';

/** JSON text read where it is cheap to carry back: a thrown error loses its class across threads, so errors are values. */
export type ParsedJson = { value: unknown } | { syntaxError: string } | { tooDeep: true };

export function readJson(text: string): ParsedJson {
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) return { tooDeep: true };
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { syntaxError: err instanceof Error ? err.message : 'invalid JSON' };
  }
}

/** The value, or JSON.parse's SyntaxError (its message names the position), or the body reader's 422 for nesting too deep. */
export function valueOf(parsed: ParsedJson): unknown {
  if ('value' in parsed) return parsed.value;
  if ('syntaxError' in parsed) throw new SyntaxError(parsed.syntaxError);
  const msg = `JSON nested deeper than ${MAX_JSON_DEPTH} levels`;
  throw new ValidationError([{ loc: ['body'], msg, type: 'json_invalid', input: null, ctx: { error: msg, max_depth: MAX_JSON_DEPTH } }]);
}
