import { readJson, type ParsedJson } from './json.js';
import { utf8Text } from '../shared/json-text.js';
import { firstAbove as firstTextAbove, type TextAbove } from './work.js';

/**
 * The tasks of the web's CPU pool (src/cpu/pool.ts), each run in a worker thread. Exported by
 * name for piscina; results are plain data (errors as values: a thrown error loses its class).
 */

export function firstAbove({ texts, limit }: { texts: string[]; limit: number }): Promise<TextAbove | undefined> {
  return firstTextAbove(texts, limit);
}

export const parseJson = readJson;

/** JSON sent as UTF-8 in shared memory (CpuPool.parseJson): decoded here, not on the event loop. */
export function parseJsonBytes({ bytes, length }: { bytes: Uint8Array; length: number }): ParsedJson {
  return readJson(utf8Text(bytes, length));
}

/** A dataset items upload (CpuPool.readItems): the rows come back in shared memory. */
export { readItemRows as readItems } from '../evals/item-parse.js';
