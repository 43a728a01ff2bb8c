import getRawBody from 'raw-body';
import type { AppContext, BodyReader } from '../http/context.js';
import { PayloadTooLargeError, RequestTimeoutError, ValidationError } from '../shared/errors.js';
import { boundedBodyRead } from './body-guard.js';
import { markStorable, MAX_JSON_DEPTH, mayHoldUnstorable } from './validation.js';
import { INLINE_JSON_MAX_CHARS, jsonDepthExceeds, utf8Text } from '../shared/json-text.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The body's text (or its bytes, `encoding` null), within `limitBytes` (413 from Content-Length at once) and BODY_IDLE_TIMEOUT_MS (408). */
async function bodyText(ctx: AppContext, limitBytes: number, idleMs: number): Promise<string>;
async function bodyText(ctx: AppContext, limitBytes: number, idleMs: number, encoding: null): Promise<Buffer>;
async function bodyText(ctx: AppContext, limitBytes: number, idleMs: number, encoding: 'utf8' | null = 'utf8'): Promise<string | Buffer> {
  try {
    return await boundedBodyRead(ctx.req, idleMs, () => getRawBody(ctx.req, { limit: limitBytes, encoding, length: ctx.get('content-length') || undefined }));
  } catch (err) {
    if (err instanceof RequestTimeoutError) throw err;
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw new PayloadTooLargeError(`Request body exceeds ${limitBytes} bytes`);
    throw new ValidationError([{ loc: ['body'], msg: 'Request body could not be read', type: 'body_unreadable', input: null }]);
  }
}

/** How a body's JSON is parsed: its bytes (a large body's off the event loop, DESIGN §21), or its text. */
export type JsonParser = { bytes: (bytes: Uint8Array) => Promise<unknown> } | { text: (text: string) => unknown };

/**
 * JSON to a value: the one place a body is parsed (CPU work on request data, DESIGN §21, so it
 * moves off the event loop here). Too deep or malformed → 422 json_invalid (FastAPI's shape). A
 * body of at most INLINE_JSON_MAX_CHARS bytes is decoded and parsed here; a larger one goes to
 * the parser as bytes, which checks its nesting and values where it parses it (src/cpu/json.ts).
 */
export async function parseJsonBody(body: Buffer, parser: JsonParser = { text: JSON.parse }): Promise<unknown> {
  if (body.length > INLINE_JSON_MAX_CHARS && 'bytes' in parser) return parsed(() => parser.bytes(body));
  return parseJsonText(utf8Text(body), 'text' in parser ? parser.text : JSON.parse);
}

export async function parseJsonText(text: string, parseJson: (text: string) => unknown = JSON.parse): Promise<unknown> {
  // A larger text's nesting is checked by parseJson, off the event loop (DESIGN §21).
  if (text.length <= INLINE_JSON_MAX_CHARS && jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
    const msg = `JSON nested deeper than ${MAX_JSON_DEPTH} levels`;
    throw new ValidationError([{ loc: ['body'], msg, type: 'json_invalid', input: null, ctx: { error: msg, max_depth: MAX_JSON_DEPTH } }]);
  }
  const value = await parsed(() => parseJson(text));
  // A larger text was checked where it was parsed (src/cpu/json.ts).
  return text.length <= INLINE_JSON_MAX_CHARS && !mayHoldUnstorable(text) ? markStorable(value) : value;
}

/** A parser's SyntaxError as the 422 json_invalid naming the position; its own ValidationError (too deep, too many values) as it is. */
async function parsed(parse: () => unknown): Promise<unknown> {
  try {
    return await parse();
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    const message = err instanceof Error ? err.message : 'invalid JSON';
    const position = Number(/position (\d+)/.exec(message)?.[1] ?? 0);
    throw new ValidationError([{ loc: ['body', position], msg: 'JSON decode error', type: 'json_invalid', input: {}, ctx: { error: message } }]);
  }
}

/**
 * Reads JSON bodies into ctx.state.body, within `limitFor(path)` and `idleMs`. Routes call it once
 * the credential is checked (src/auth/route.ts), so an unauthenticated body is never read.
 * Multipart uploads are left on the stream for the route; on a path `keepsBytes` names, the body's
 * bytes are left for the route (dataset uploads: decoded, parsed and validated together, off the event loop).
 */
export function jsonBody(limitFor: (path: string) => number, idleMs: number, parser: JsonParser = { text: JSON.parse }, keepsBytes: (path: string) => boolean = () => false): BodyReader {
  return async (ctx) => {
    if (!METHODS_WITH_BODY.has(ctx.method) || ctx.is('multipart')) return;
    if (keepsBytes(ctx.path)) {
      const bytes = await bodyText(ctx, limitFor(ctx.path), idleMs, null);
      if (bytes.length > 0) ctx.state.body = bytes;
      return;
    }
    const body = await bodyText(ctx, limitFor(ctx.path), idleMs, null);
    if (body.length === 0) return;
    // Declared as something other than JSON: the raw text reaches validation, which refuses it as "not an object".
    ctx.state.body = ctx.get('content-type') && !ctx.is('json') ? body.toString('utf8') : await parseJsonBody(body, parser);
  };
}
