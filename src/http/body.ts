import getRawBody from 'raw-body';
import type { Middleware } from 'koa';
import type { AppState } from './route.js';
import { PayloadTooLargeError, ValidationError } from '../shared/errors.js';
import { MAX_JSON_DEPTH } from './validation.js';
import { INLINE_JSON_MAX_CHARS } from '../cpu/work.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);


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

/**
 * Reads JSON bodies into ctx.state.body with a size limit. Multipart uploads are left on the
 * stream for the route that wants them. Malformed JSON → 422 json_invalid (FastAPI's shape).
 */
export function jsonBody(limitFor: (path: string) => number, parseJson: (text: string) => unknown = JSON.parse): Middleware<AppState> {
  return async (ctx, next) => {
    if (!METHODS_WITH_BODY.has(ctx.method) || ctx.is('multipart')) return next();
    const limitBytes = limitFor(ctx.path);
    let text: string;
    try {
      text = await getRawBody(ctx.req, { limit: limitBytes, encoding: 'utf8', length: ctx.get('content-length') || undefined });
    } catch (err) {
      const type = (err as { type?: string }).type;
      if (type === 'entity.too.large') throw new PayloadTooLargeError(`Request body exceeds ${limitBytes} bytes`);
      throw new ValidationError([{ loc: ['body'], msg: 'Request body could not be read', type: 'body_unreadable', input: null }]);
    }
    if (text.length === 0) return next();
    if (ctx.get('content-type') && !ctx.is('json')) {
      // Declared as something other than JSON: the raw text reaches validation, which refuses it as "not an object".
      ctx.state.body = text;
      return next();
    }
    // A larger text's nesting is checked by parseJson, off the event loop (DESIGN §21).
    if (text.length <= INLINE_JSON_MAX_CHARS && jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
      const msg = `JSON nested deeper than ${MAX_JSON_DEPTH} levels`;
      throw new ValidationError([{ loc: ['body'], msg, type: 'json_invalid', input: null, ctx: { error: msg, max_depth: MAX_JSON_DEPTH } }]);
    }
    try {
      ctx.state.body = await parseJson(text);
    } catch (err) {
      if (err instanceof ValidationError) throw err;
      const message = err instanceof Error ? err.message : 'invalid JSON';
      const position = Number(/position (\d+)/.exec(message)?.[1] ?? 0);
      throw new ValidationError([
        { loc: ['body', position], msg: 'JSON decode error', type: 'json_invalid', input: {}, ctx: { error: message } },
      ]);
    }
    return next();
  };
}
