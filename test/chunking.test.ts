import { describe, expect, it } from 'vitest';
import { chunkText, fixedChunks, paragraphChunks, recursiveChunks, sentenceChunks } from '../workers/knowledge/chunking.js';
import { embed, EMBEDDING_DIMENSIONS } from '../src/knowledge/embedding.js';
import { extractText } from '../workers/knowledge/extract.js';

const STRATEGIES = ['fixed', 'sentence', 'paragraph', 'recursive'] as const;
const chars = (s: string) => [...s].length;

describe('chunk strategies', () => {
  it.each(STRATEGIES)('%s: empty and blank text give no chunks', (strategy) => {
    expect(chunkText('', strategy, { size: 100, overlap: 10 })).toEqual([]);
    expect(chunkText(' \n\n\t ', strategy, { size: 100, overlap: 10 })).toEqual([]);
  });

  it.each(STRATEGIES)('%s: refuses overlap ≥ size and sizes below 1', (strategy) => {
    expect(() => chunkText('text', strategy, { size: 10, overlap: 10 })).toThrow(RangeError);
    expect(() => chunkText('text', strategy, { size: 10, overlap: 11 })).toThrow(RangeError);
    expect(() => chunkText('text', strategy, { size: 0, overlap: 0 })).toThrow(RangeError);
    expect(() => chunkText('text', strategy, { size: 10, overlap: -1 })).toThrow(RangeError);
  });

  it.each(STRATEGIES)('%s: one huge word is split into windows no longer than size, losing nothing', (strategy) => {
    const word = 'a'.repeat(250);
    const chunks = chunkText(word, strategy, { size: 100, overlap: 20 });
    expect(chunks.every((c) => chars(c) <= 100)).toBe(true);
    expect(chunks.join('').replaceAll('a', '').length).toBe(0);
    expect(chunks.length).toBe(3);
  });

  it.each(STRATEGIES)('%s: never splits a surrogate pair or exceeds size in code points', (strategy) => {
    const text = '😀🎉 ünïcödé 文字 '.repeat(40);
    const chunks = chunkText(text, strategy, { size: 50, overlap: 10 });
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chars(chunk)).toBeLessThanOrEqual(50);
      expect(chunk).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    }
  });

  it('fixed: windows step by size - overlap', () => {
    expect(fixedChunks('abcdefghij', { size: 4, overlap: 1 })).toEqual(['abcd', 'defg', 'ghij']);
    expect(fixedChunks('abcdefghij', { size: 4, overlap: 0 })).toEqual(['abcd', 'efgh', 'ij']);
  });

  it('sentence: keeps sentences whole and carries overlap', () => {
    const text = 'One is first. Two is second. Three is third. Four is fourth.';
    expect(sentenceChunks(text, { size: 31, overlap: 15 })).toEqual(['One is first. Two is second.', 'Two is second. Three is third.', 'Three is third. Four is fourth.']);
    // An overlap that leaves no room for the next sentence is dropped, never emitted alone.
    expect(sentenceChunks(text, { size: 30, overlap: 15 })).toEqual(['One is first. Two is second.', 'Two is second. Three is third.', 'Four is fourth.']);
  });

  it('paragraph: packs whole paragraphs', () => {
    const text = 'First paragraph.\n\nSecond paragraph.\n\n\nThird one here.';
    expect(paragraphChunks(text, { size: 40, overlap: 0 })).toEqual(['First paragraph.\n\nSecond paragraph.', 'Third one here.']);
  });

  it('recursive: splits on paragraphs, then lines, then sentences, then words', () => {
    const text = `${'word '.repeat(30).trim()}\n\nShort paragraph.`;
    const chunks = recursiveChunks(text, { size: 60, overlap: 0 });
    expect(chunks.every((c) => chars(c) <= 60)).toBe(true);
    expect(chunks.at(-1)).toMatch(/Short paragraph\.$/);
    expect(chunks.join(' ').split(/\s+/).filter((w) => w === 'word')).toHaveLength(30);
  });
});

describe('local embedder and text extraction', () => {
  it('embeds deterministically into unit vectors; related text is closer than unrelated', () => {
    const a = embed('reset the router password');
    expect(a).toHaveLength(EMBEDDING_DIMENSIONS);
    expect(embed('reset the router password')).toEqual(a);
    expect(Math.hypot(...a)).toBeCloseTo(1, 6);
    const dot = (x: number[], y: number[]) => x.reduce((sum, v, i) => sum + v * y[i]!, 0);
    expect(dot(a, embed('restore the router passphrase'))).toBeGreaterThan(dot(a, embed('refund policy for purchases')));
    expect(embed('')).toEqual(new Array(EMBEDDING_DIMENSIONS).fill(0));
  });

  it('extracts text from HTML without markup or scripts; refuses bytes that are not UTF-8 or hold NULs', () => {
    const text = extractText(Buffer.from('<h1>Title</h1><p>Body &amp; more</p><script>x()</script>'), 'text/html');
    expect(text).toContain('Body & more');
    expect(text).not.toMatch(/<|x\(\)/);
    expect(() => extractText(Buffer.from([0xff, 0xfe]), 'text/plain')).toThrow('not valid UTF-8');
    expect(() => extractText(Buffer.from('a\u0000b'), 'text/plain')).toThrow('NUL');
  });
});
