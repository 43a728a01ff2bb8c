import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { RateLimitedError } from '../shared/errors.js';
import { INLINE_JSON_MAX_CHARS, surelyWithin, type CpuWork, type ItemsSent, type TextAbove } from './work.js';
import type { ItemRows } from '../evals/item-parse.js';
import { valueOf, type ParsedJson } from './json.js';
import { checkOutput, type OutputCheck, type OutputFormat } from '../shared/output-schema.js';
import { utf8Text } from '../shared/json-text.js';

/** When a client refused for a full pool may try again: its tasks take well under a second each. */
const BUSY_RETRY_SECONDS = 1;
/** A thread left idle this long ends (minThreads stay). */
const IDLE_THREAD_MS = 60_000;
/** Added to the threads' niceness (Linux, through @napi-rs/nice; elsewhere ignored). */
const THREAD_NICENESS = 10;
/** Output schemas up to this size compile inline in ~10 ms at most (once per process); larger ones on a thread. */
const INLINE_SCHEMA_MAX_CHARS = 8 * 1024;
/** Characters handed to a thread (or encoded for one) at a time: a copy of about 1 MB holds the event loop ~1-3 ms. */
const HOP_CHARS = 1024 * 1024;

/**
 * The web's worker threads for CPU work on request data (DESIGN §21), built by its entry and
 * closed at shutdown. Work too small to be worth a hop stays inline; a full queue is a 429.
 */
export class CpuPool implements CpuWork {
  private readonly pool: Piscina;
  /** Output schemas' compile and answers' validation: a file of their own, so a worker's threads never load the tokenizer. */
  private readonly schemaTasks = taskEntry('schema-tasks');

  /**
   * `loads`: the tasks each thread loads as it starts. The web's threads load the tokenizer's (they
   * count long histories; the ranks themselves load with the first count, not as a process boots); a worker's only check schemas, and load the schema tasks alone.
   */
  constructor(options: { threads: number; queue: number }, loads: 'tasks' | 'schema-tasks' = 'tasks') {
    this.pool = new Piscina({
      filename: taskEntry(loads),
      // A worker's schema threads start with the first large schema: nothing of theirs loads while a process boots.
      minThreads: loads === 'tasks' ? Math.min(1, options.threads) : 0,
      maxThreads: options.threads,
      maxQueue: options.queue,
      idleTimeout: IDLE_THREAD_MS,
      // A thread's event loop keeps running between tasks (the tokenizer loads while it waits for its first).
      atomics: 'disabled',
      // Below the event loop and the databases on a busy machine: their short work goes first, a long count waits.
      niceIncrement: THREAD_NICENESS,
    });
  }

  /** Sent in batches of about HOP_CHARS, each a short copy on the event loop; the first batch with a text too large ends it. */
  async firstAbove(texts: string[], limit: number): Promise<TextAbove | undefined> {
    let start = 0;
    while (start < texts.length) {
      let end = start;
      for (let chars = 0; end < texts.length && (end === start || chars + texts[end]!.length <= HOP_CHARS); end++) chars += texts[end]!.length;
      const batch = texts.slice(start, end);
      if (!batch.every((text) => surelyWithin(text, limit))) {
        const above = await this.run<TextAbove | undefined>('firstAbove', { texts: batch, limit });
        if (above) return { index: start + above.index, tokens: above.tokens };
      }
      start = end;
    }
    return undefined;
  }

  async parseJson(text: string): Promise<unknown> {
    if (text.length <= INLINE_JSON_MAX_CHARS) return JSON.parse(text);
    const { bytes, length } = await sharedUtf8(text);
    return valueOf(await this.run<ParsedJson>('parseJsonBytes', { bytes, length }));
  }

  async parseJsonBytes(content: Uint8Array): Promise<unknown> {
    if (content.length <= INLINE_JSON_MAX_CHARS) return JSON.parse(utf8Text(content));
    const { bytes, length } = await sharedCopy(content);
    return valueOf(await this.run<ParsedJson>('parseJsonBytes', { bytes, length }));
  }

  outputSchemaProblem(schema: unknown): Promise<string | undefined> {
    return this.run<string | undefined>('outputSchemaProblem', schema, this.schemaTasks);
  }

  /**
   * A small schema (most are) is compiled once in this process in a few milliseconds and checks an
   * answer faster than a hop to a thread and back; only larger ones, whose compile takes longer, go
   * to a thread. Either way each compile and each validation is bounded in time.
   */
  async checkOutput(format: OutputFormat, text: string): Promise<OutputCheck> {
    if (format.type === 'json_object' || JSON.stringify(format.schema).length <= INLINE_SCHEMA_MAX_CHARS) return checkOutput(format, text);
    return this.run<OutputCheck>('checkOutput', { format, text }, this.schemaTasks);
  }

  /** Every upload, small ones too: its parse and validation are the thread's, and only the rows to store come back. */
  async readItems({ format, content, maxItems }: ItemsSent): Promise<ItemRows> {
    const { bytes, length } = await sharedCopy(content);
    return this.run<ItemRows>('readItems', { format, bytes, length, maxItems });
  }

  /** Waits for running tasks, then ends the threads. */
  close(): Promise<void> {
    return this.pool.close();
  }

  private async run<R>(name: string, task: unknown, filename?: string): Promise<R> {
    try {
      return (await this.pool.run(task, { name, filename })) as R;
    } catch (err) {
      if (err instanceof Error && err.message === 'Task queue is at limit') {
        throw new RateLimitedError('The server is busy with other large requests; try again in a moment', BUSY_RETRY_SECONDS, 'CPU pool queue full (CPU_POOL_QUEUE)');
      }
      throw err;
    }
  }
}

/**
 * The text as UTF-8 in memory the threads share (a message then copies nothing), encoded in
 * slices of HOP_CHARS with the event loop free between them. A slice never ends between the two
 * halves of a surrogate pair.
 */
async function sharedUtf8(text: string): Promise<{ bytes: Uint8Array; length: number }> {
  const bytes = new Uint8Array(new SharedArrayBuffer(text.length * 3));
  const encoder = new TextEncoder();
  let length = 0;
  for (let from = 0; from < text.length; ) {
    let to = Math.min(text.length, from + HOP_CHARS);
    if (to < text.length && isHighSurrogate(text.charCodeAt(to - 1))) to--;
    length += encoder.encodeInto(text.slice(from, to), bytes.subarray(length)).written;
    from = to;
    if (from < text.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return { bytes, length };
}

/** Bytes copied into memory the threads share (a message then copies nothing), HOP_CHARS at a time with the event loop free between. */
async function sharedCopy(content: Uint8Array): Promise<{ bytes: Uint8Array; length: number }> {
  const bytes = new Uint8Array(new SharedArrayBuffer(content.length));
  for (let from = 0; from < content.length; from += HOP_CHARS) {
    bytes.set(content.subarray(from, from + HOP_CHARS), from);
    if (from + HOP_CHARS < content.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return { bytes, length: content.length };
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * The compiled tasks beside this file. Under vitest this file is the TypeScript source, which a
 * thread cannot load, so it is the build's copy in dist/ (npm test builds first).
 */
function taskEntry(name: string): string {
  const here = new URL(import.meta.url);
  if (!here.pathname.endsWith('.ts')) return fileURLToPath(new URL(`./${name}.js`, here));
  const built = fileURLToPath(new URL(`../../dist/src/cpu/${name}.js`, here));
  if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build`);
  return built;
}
