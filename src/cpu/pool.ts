import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { RateLimitedError } from '../shared/errors.js';
import { INLINE_JSON_MAX_CHARS, surelyWithin, type CpuWork, type TextAbove } from './work.js';
import { valueOf, type ParsedJson } from './json.js';

/** When a client refused for a full pool may try again: its tasks take well under a second each. */
const BUSY_RETRY_SECONDS = 1;
/** A thread left idle this long ends (minThreads stay). */
const IDLE_THREAD_MS = 60_000;
/** Added to the threads' niceness (Linux, through @napi-rs/nice; elsewhere ignored). */
const THREAD_NICENESS = 10;

/**
 * The web's worker threads for CPU work on request data (DESIGN §21), built by its entry and
 * closed at shutdown. Work too small to be worth a hop stays inline; a full queue is a 429.
 */
export class CpuPool implements CpuWork {
  private readonly pool: Piscina;

  constructor(options: { threads: number; queue: number }) {
    this.pool = new Piscina({
      filename: taskEntry(),
      minThreads: Math.min(1, options.threads),
      maxThreads: options.threads,
      maxQueue: options.queue,
      idleTimeout: IDLE_THREAD_MS,
      // A thread's event loop keeps running between tasks (the tokenizer loads while it waits for its first).
      atomics: 'disabled',
      // Below the event loop and the databases on a busy machine: their short work goes first, a long count waits.
      niceIncrement: THREAD_NICENESS,
    });
  }

  async firstAbove(texts: string[], limit: number): Promise<TextAbove | undefined> {
    if (texts.every((text) => surelyWithin(text, limit))) return undefined;
    return this.run<TextAbove | undefined>('firstAbove', { texts, limit });
  }

  async parseJson(text: string): Promise<unknown> {
    if (text.length <= INLINE_JSON_MAX_CHARS) return JSON.parse(text);
    return valueOf(await this.run<ParsedJson>('parseJson', text));
  }

  /** Waits for running tasks, then ends the threads. */
  close(): Promise<void> {
    return this.pool.close();
  }

  private async run<R>(name: string, task: unknown): Promise<R> {
    try {
      return (await this.pool.run(task, { name })) as R;
    } catch (err) {
      if (err instanceof Error && err.message === 'Task queue is at limit') {
        throw new RateLimitedError('The server is busy with other large requests; try again in a moment', BUSY_RETRY_SECONDS, 'CPU pool queue full (CPU_POOL_QUEUE)');
      }
      throw err;
    }
  }
}

/**
 * The compiled tasks beside this file. Under vitest this file is the TypeScript source, which a
 * thread cannot load, so it is the build's copy in dist/ (npm test builds first).
 */
function taskEntry(): string {
  const here = new URL(import.meta.url);
  if (!here.pathname.endsWith('.ts')) return fileURLToPath(new URL('./tasks.js', here));
  const built = fileURLToPath(new URL('../../dist/src/cpu/tasks.js', here));
  if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build`);
  return built;
}
