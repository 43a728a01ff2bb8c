/**
 * The built-in local embedder: feature hashing of words and of their character trigrams into a
 * fixed number of signed dimensions, L2-normalised. Deterministic, offline, no model to load.
 * Trigrams make it tolerant of spelling variants, inflections and partial word overlap that
 * full-text search (whole stemmed lexemes) misses.
 */
export const EMBEDDING_DIMENSIONS = 96; // `cube` holds at most 100

const WORD = /[\p{L}\p{N}]+/gu;
const TRIGRAM_WEIGHT = 0.5;

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

function add(vector: Float64Array, feature: string, weight: number): void {
  const hash = fnv1a(feature);
  vector[hash % EMBEDDING_DIMENSIONS]! += hash & 0x80000000 ? -weight : weight;
}

export function embed(text: string): number[] {
  const vector = new Float64Array(EMBEDDING_DIMENSIONS);
  for (const [word] of text.toLowerCase().matchAll(WORD)) {
    add(vector, `w:${word}`, 1);
    const padded = `#${word}#`;
    for (let i = 0; i + 3 <= padded.length; i++) add(vector, `t:${padded.slice(i, i + 3)}`, TRIGRAM_WEIGHT);
  }
  const norm = Math.hypot(...vector);
  return Array.from(vector, (x) => (norm > 0 ? x / norm : 0));
}

/** A vector as a `cube` literal (bound as a parameter, never spliced into SQL). */
export const cubeLiteral = (vector: number[]) => `(${vector.map((x) => x.toFixed(6)).join(',')})`;
