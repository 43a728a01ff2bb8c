import getRawBody from 'raw-body';
import type { Middleware } from 'koa';
import { PayloadTooLargeError, ValidationError } from './errors.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Reads JSON bodies into ctx.state.body with a size limit. Multipart uploads are left on the
 * stream for the route that wants them. Malformed JSON → 422 json_invalid (FastAPI's shape).
 */
export function jsonBody(limitBytes: number): Middleware {
  return async (ctx, next) => {
    if (!METHODS_WITH_BODY.has(ctx.method) || ctx.is('multipart')) return next();
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
    try {
      ctx.state.body = JSON.parse(text);
    } catch (err) {
      const message = err instanceof Error ? err.message : 'invalid JSON';
      const position = Number(/position (\d+)/.exec(message)?.[1] ?? 0);
      throw new ValidationError([
        { loc: ['body', position], msg: 'JSON decode error', type: 'json_invalid', input: {}, ctx: { error: message } },
      ]);
    }
    return next();
  };
}
