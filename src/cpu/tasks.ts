import { tokenizer } from '../shared/context-window.js';
import { readJson } from './json.js';
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

export const parseJson = readJson;
