import { tokenizer } from '../shared/context-window.js';
import { jsonDepthExceeds } from '../http/body.js';
import { MAX_JSON_DEPTH } from '../http/validation.js';
import { firstAbove as firstTextAbove, type TextAbove } from './work.js';

/**
 * The tasks of the web's CPU pool (src/cpu/pool.ts), each run in a worker thread. Exported by
 * name for piscina; results are plain data (errors as values: a thrown error loses its class).
 */

// Each thread loads the tokenizer's ranks as it starts, not while a request waits.
void tokenizer().catch(() => undefined);

export function firstAbove({ texts, limit }: { texts: string[]; limit: number }): Promise<TextAbove | undefined> {
  return firstTextAbove(texts, limit);
}

export type ParsedJson = { value: unknown } | { syntaxError: string } | { tooDeep: true };

export function parseJson(text: string): ParsedJson {
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) return { tooDeep: true };
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { syntaxError: err instanceof Error ? err.message : 'invalid JSON' };
  }
}
