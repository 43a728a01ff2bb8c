import { tokensAbove } from '../shared/context-window.js';
import { readJson, valueOf } from './json.js';
import { INLINE_JSON_MAX_CHARS, utf8Text } from '../shared/json-text.js';

export { INLINE_JSON_MAX_CHARS } from '../shared/json-text.js';
import { checkOutput, outputSchemaProblem, type OutputCheck, type OutputFormat } from '../shared/output-schema.js';
import { readItemRows, type ItemFormat, type ItemRows } from '../evals/item-parse.js';

/** CpuWork.firstAbove, where it runs (inline, or in a pool's thread). */
export async function firstAbove(texts: string[], limit: number): Promise<TextAbove | undefined> {
  for (const [index, text] of texts.entries()) {
    const tokens = surelyWithin(text, limit) ? undefined : await tokensAbove(text, limit);
    if (tokens !== undefined) return { index, tokens };
  }
  return undefined;
}

/**
 * CPU work the web does on request data (DESIGN §21): counting the tokens of a long history and
 * parsing a large body. The web runs it on a worker-thread pool (CpuPool) so no request holds its
 * event loop; processes without a pool (the workers' schedule ticks, in-process tests) run it inline.
 */
export interface CpuWork {
  /**
   * The first text of more than `limit` tokens, and its count; undefined when all fit. Counting
   * stops there: one is enough to refuse the request, and a history's worth of counting is not free.
   */
  firstAbove(texts: string[], limit: number): Promise<TextAbove | undefined>;
  /**
   * JSON.parse, a large text off the event loop (where its nesting is checked too: the body
   * reader checks only texts of at most INLINE_JSON_MAX_CHARS). Malformed text rejects with
   * JSON.parse's SyntaxError (its message names the position); too deep with a ValidationError.
   */
  parseJson(text: string): Promise<unknown>;
  /**
   * A body's bytes (UTF-8) parsed as parseJson parses text: a large body never becomes one string
   * on the event loop (a 20 MB string, its copy for the thread and the collector's work on both
   * held /healthz past 100 ms). Bytes of at most INLINE_JSON_MAX_CHARS are decoded and parsed inline.
   */
  parseJsonBytes(bytes: Uint8Array): Promise<unknown>;
  /**
   * Why a caller's output schema cannot be one (DESIGN §23), undefined when it can: its shape, and
   * ajv's compile of it (bounded in time). Compiling a large schema takes a fifth of a second.
   */
  outputSchemaProblem(schema: unknown): Promise<string | undefined>;
  /** An answer checked against its output format: compiled (once per thread) and validated, each bounded in time. */
  checkOutput(format: OutputFormat, text: string): Promise<OutputCheck>;
  /** A dataset items upload (CSV, JSONL, JSON) read, bounded and validated into the rows to store (src/evals/item-parse.ts). */
  readItems(upload: ItemsSent): Promise<ItemRows>;
}

/** An items upload as it arrived: the body's or the uploaded file's bytes. */
export interface ItemsSent {
  format: ItemFormat;
  content: Uint8Array;
  maxItems: number;
}

export interface TextAbove {
  index: number;
  tokens: number;
}


/** A UTF-16 code unit is at most 3 UTF-8 bytes, and a token at least one byte: such a text is within `limit` uncounted. */
export const surelyWithin = (text: string, limit: number) => text.length * 3 <= limit;

export const inlineCpu: CpuWork = {
  firstAbove: (texts, limit) => firstAbove(texts, limit),
  parseJson: async (text) => (text.length <= INLINE_JSON_MAX_CHARS ? JSON.parse(text) : valueOf(readJson(text))),
  parseJsonBytes: async (bytes) => inlineCpu.parseJson(utf8Text(bytes)),
  outputSchemaProblem: async (schema) => outputSchemaProblem(schema),
  checkOutput: async (format, text) => checkOutput(format, text),
  readItems: async ({ format, content, maxItems }) => readItemRows({ format, bytes: content, length: content.length, maxItems }),
};
