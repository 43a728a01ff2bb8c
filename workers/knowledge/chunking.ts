import type { ChunkStrategy } from '../../src/db/knowledge-models.js';

/**
 * Splits text into chunks of at most `size` characters (Unicode code points, never half a
 * surrogate pair), consecutive chunks sharing up to `overlap` characters.
 */
export interface ChunkOptions {
  size: number;
  overlap: number;
}

function assertOptions({ size, overlap }: ChunkOptions): void {
  if (!Number.isInteger(size) || size < 1) throw new RangeError('chunk size must be a positive integer');
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= size) throw new RangeError('chunk overlap must be at least 0 and less than the chunk size');
}

const length = (text: string) => [...text].length;

/** `fixed`: windows of `size` characters, each starting `size - overlap` after the last. */
export function fixedChunks(text: string, options: ChunkOptions): string[] {
  assertOptions(options);
  const chars = [...text];
  const step = options.size - options.overlap;
  const chunks: string[] = [];
  for (let start = 0; start < chars.length; start += step) {
    const chunk = chars.slice(start, start + options.size).join('').trim();
    if (chunk) chunks.push(chunk);
    if (start + options.size >= chars.length) break;
  }
  return chunks;
}

/**
 * Packs pieces (sentences, paragraphs…) into chunks up to `size`, carrying the trailing pieces
 * that fit in `overlap` into the next chunk. A piece longer than `size` is split with `fixed`.
 */
function pack(pieces: string[], options: ChunkOptions, joiner: string): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  // Whether `current` holds anything beyond the overlap carried from the last chunk.
  let fresh = false;
  const size = (list: string[]) => length(list.join(joiner));
  const emit = () => {
    if (fresh) chunks.push(current.join(joiner).trim());
    const carried: string[] = [];
    for (let i = current.length - 1; i >= 0 && size([current[i]!, ...carried]) <= options.overlap; i--) carried.unshift(current[i]!);
    current = carried;
    fresh = false;
  };
  for (const piece of pieces) {
    if (length(piece) > options.size) {
      emit();
      current = [];
      chunks.push(...fixedChunks(piece, options));
      continue;
    }
    if (size([...current, piece]) > options.size) emit();
    // A carried overlap that leaves no room for the piece is dropped.
    if (size([...current, piece]) > options.size) current = [];
    current.push(piece);
    fresh = true;
  }
  if (fresh) chunks.push(current.join(joiner).trim());
  return chunks.filter(Boolean);
}

const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/** `sentence`: whole sentences (ICU sentence boundaries) packed up to `size`. */
export function sentenceChunks(text: string, options: ChunkOptions): string[] {
  assertOptions(options);
  const sentences = [...sentenceSegmenter.segment(text)].map((s) => s.segment.trim()).filter(Boolean);
  return pack(sentences, options, ' ');
}

/** `paragraph`: blank-line separated paragraphs packed up to `size`. */
export function paragraphChunks(text: string, options: ChunkOptions): string[] {
  assertOptions(options);
  const paragraphs = text.split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean);
  return pack(paragraphs, options, '\n\n');
}

const SEPARATORS = ['\n\n', '\n', '. ', ' '];

/** Splits on the first separator that helps, recursing into pieces that are still too long. */
function recursiveSplit(text: string, size: number, separators: string[]): string[] {
  if (length(text) <= size) return [text];
  const [separator, ...rest] = separators;
  if (separator === undefined) return [text]; // `pack` falls back to fixed windows
  const parts = text.split(separator).filter((p) => p.trim());
  if (parts.length <= 1) return recursiveSplit(text, size, rest);
  return parts.flatMap((part, i) => recursiveSplit(i < parts.length - 1 && separator.trim() ? part + separator.trim() : part, size, rest));
}

/** `recursive`: paragraphs, then lines, then sentences, then words; fixed windows as the last resort. */
export function recursiveChunks(text: string, options: ChunkOptions): string[] {
  assertOptions(options);
  return pack(recursiveSplit(text.trim(), options.size, SEPARATORS).map((p) => p.trim()).filter(Boolean), options, ' ');
}

export function chunkText(text: string, strategy: ChunkStrategy, options: ChunkOptions): string[] {
  switch (strategy) {
    case 'fixed':
      return fixedChunks(text, options);
    case 'sentence':
      return sentenceChunks(text, options);
    case 'paragraph':
      return paragraphChunks(text, options);
    case 'recursive':
      return recursiveChunks(text, options);
  }
}
