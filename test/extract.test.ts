import { describe, expect, it } from 'vitest';
import { DEFAULT_EXTRACT_LIMITS, DOCX, extractDocument, PDF, type ExtractLimits } from '../workers/knowledge/extract.js';
import { IngestionError } from '../workers/knowledge/ingestion-error.js';
import { docxWithParagraphs, docxOfTinyParagraphs, docxZipBomb, encryptedPdf, notAPdf, pdfClaimingPages, pdfFlateBomb, pdfWithoutText, pdfWithPages, truncatedPdf } from './support/documents.js';

/** Reading documents with the real parsers (pdf.js, mammoth) in their bounded threads. */

const refusal = async (bytes: Buffer, type: string, limits: ExtractLimits = DEFAULT_EXTRACT_LIMITS): Promise<string> => {
  const err = await extractDocument(bytes, type, limits).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(IngestionError);
  return (err as Error).message;
};

/** The process still reads a good document as usual. */
const expectHealthy = async () => {
  expect(await extractDocument(await pdfWithPages(['Still reading.']), PDF)).toEqual([{ page: 1, text: 'Still reading.' }]);
};

/** The refusal of `bytes`, and how far (in MB) the process's resident memory rose meanwhile at most. */
const refusalAndGrowth = async (bytes: Buffer, type: string): Promise<[string, number]> => {
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  try {
    return [await refusal(bytes, type), Math.round((peak - before) / 1024 / 1024)];
  } finally {
    clearInterval(sampler);
  }
};

describe('PDF and DOCX text', () => {
  it('a PDF gives one page per page with text, numbered', async () => {
    const pages = await extractDocument(await pdfWithPages(['First page text.', 'Second page, about refunds.', 'Third.']), PDF);
    expect(pages).toEqual([
      { page: 1, text: 'First page text.' },
      { page: 2, text: 'Second page, about refunds.' },
      { page: 3, text: 'Third.' },
    ]);
  });

  it('keeps lines and paragraphs, wraps long text back into words, and skips pages without text', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const pages = await extractDocument(await pdfWithPages(['Title\nFirst line\n\nA new paragraph.', '', long]), PDF);
    expect(pages).toEqual([
      { page: 1, text: 'Title\nFirst line\n\nA new paragraph.' },
      { page: 3, text: expect.any(String) },
    ]);
    expect(pages[1]!.text.split(/\s+/)).toEqual(long.split(' '));
  });

  it('a DOCX gives its paragraphs separated by blank lines, without pages', async () => {
    const pages = await extractDocument(docxWithParagraphs(['Shipping guide', 'Parcels ship in two days & arrive <soon>.']), DOCX);
    expect(pages).toEqual([{ page: null, text: 'Shipping guide\n\nParcels ship in two days & arrive <soon>.' }]);
  });

  it('reads documents side by side', async () => {
    const [pdf, docx] = await Promise.all([extractDocument(await pdfWithPages(['Alpha.', 'Beta.']), PDF), extractDocument(docxWithParagraphs(['Gamma.']), DOCX)]);
    expect(pdf.map((p) => p.text)).toEqual(['Alpha.', 'Beta.']);
    expect(docx).toEqual([{ page: null, text: 'Gamma.' }]);
  });
});

describe('text, Markdown and HTML as before', () => {
  it('are decoded as UTF-8, HTML reduced to its text', async () => {
    expect(await extractDocument(Buffer.from('plain ünïcode'), 'text/plain')).toEqual([{ page: null, text: 'plain ünïcode' }]);
    expect(await extractDocument(Buffer.from('# Title\n\n*body*'), 'text/markdown')).toEqual([{ page: null, text: '# Title\n\n*body*' }]);
    const [html] = await extractDocument(Buffer.from('<h1>Title</h1><p>Body &amp; more <a href="https://x.test">link</a></p><script>x()</script>'), 'text/html');
    expect(html!.page).toBeNull();
    expect(html!.text).toContain('Body & more link');
    expect(html!.text).not.toMatch(/<|x\(\)|https/);
  });

  it('refuse bytes that are not UTF-8 or hold NULs', async () => {
    expect(await refusal(Buffer.from([0xff, 0xfe]), 'text/plain')).toBe('The document is not valid UTF-8 text');
    expect(await refusal(Buffer.from('a\u0000b'), 'text/markdown')).toBe('The document contains NUL bytes; it looks binary, not text');
  });
});

describe('hostile and broken documents', () => {
  const word = (docx: Buffer) => Buffer.from(docx.toString('latin1').replaceAll('word/document.xml', 'word/documenX.xml'), 'latin1');
  const cases: [string, () => Buffer | Promise<Buffer>, string, RegExp | string][] = [
    ['a truncated PDF', truncatedPdf, PDF, /^The PDF is damaged or truncated/],
    ['an encrypted PDF', encryptedPdf, PDF, 'The PDF is encrypted (password protected); upload an unprotected copy'],
    ['a PDF claiming 100,000 pages', () => pdfClaimingPages(100_000), PDF, 'The PDF has 100000 pages; at most 2000 are accepted'],
    ['PNG bytes as a PDF', notAPdf, PDF, 'The file is not a PDF (it does not start with %PDF-)'],
    ['an empty PDF', () => Buffer.alloc(0), PDF, 'The file is not a PDF (it does not start with %PDF-)'],
    ['a PDF without a text layer', pdfWithoutText, PDF, 'The PDF has no extractable text (it may be scanned images; run OCR on it first)'],
    ['a PDF stream inflating to 1 GiB', () => pdfFlateBomb(1024), PDF, 'The PDF expands to more than 50 MB; refused as a possible decompression bomb'],
    ['a PDF page repeating a 40 MB stream 1000 times', () => pdfFlateBomb(40, 1000), PDF, 'The PDF expands to more than 50 MB; refused as a possible decompression bomb'],
    ['a DOCX zip bomb', () => docxZipBomb(), DOCX, 'The DOCX expands to more than 50 MB; refused as a possible zip bomb'],
    ['a DOCX zip bomb that lies about its size', () => docxZipBomb(true), DOCX, 'The DOCX expands to more than 50 MB; refused as a possible zip bomb'],
    ['random bytes as a DOCX', () => Buffer.from('not a zip at all, just words'), DOCX, 'The DOCX file is not a valid Word document'],
    ['a zip signature and nothing after', () => Buffer.from('PK\u0003\u0004 but no zip after all'), DOCX, 'The DOCX file is not a valid Word document'],
    ['a zip without word/document.xml', () => word(docxWithParagraphs(['x'])), DOCX, 'The DOCX file is not a valid Word document'],
    ['an empty DOCX', () => Buffer.alloc(0), DOCX, 'The DOCX file is not a valid Word document'],
    ['an unknown type', () => Buffer.from('MZ'), 'application/x-msdownload', 'Documents of type application/x-msdownload cannot be read'],
  ];

  it.each(cases)('%s is refused with a clear reason, and the next document is read', async (_, build, type, reason) => {
    const [message, growthMb] = await refusalAndGrowth(await build(), type);
    if (typeof reason === 'string') expect(message).toBe(reason);
    else expect(message).toMatch(reason);
    expect(growthMb).toBeLessThan(600); // unbounded, the bombs here take gigabytes
    await expectHealthy();
  });

  it('a document that exhausts the reading thread\'s heap is refused, and the next document is read', async () => {
    expect(await refusal(docxOfTinyParagraphs(12), DOCX)).toBe('The DOCX needs more memory to read than a document may use (256 MB); refused as a possible zip bomb');
    await expectHealthy();
  }, 30_000);

  it('stops at the text bound', async () => {
    const limits = { ...DEFAULT_EXTRACT_LIMITS, maxTextChars: 20 };
    expect(await refusal(await pdfWithPages(['Twelve chars', 'Twelve chars']), PDF, limits)).toBe('The PDF holds more than 20 characters of text; split it into smaller documents');
    expect(await refusal(docxWithParagraphs(['a'.repeat(21)]), DOCX, limits)).toBe('The DOCX holds more than 20 characters of text; split it into smaller documents');
    await expectHealthy();
  });

  it('stops at the page bound before reading pages', async () => {
    const limits = { ...DEFAULT_EXTRACT_LIMITS, maxPages: 2 };
    expect(await refusal(await pdfWithPages(['1', '2', '3']), PDF, limits)).toBe('The PDF has 3 pages; at most 2 are accepted');
  });

  it('stops at the time bound', async () => {
    const pages = Array.from({ length: 200 }, (_, i) => `Page ${i} `.repeat(40));
    expect(await refusal(await pdfWithPages(pages), PDF, { ...DEFAULT_EXTRACT_LIMITS, timeoutMs: 50 })).toBe('Reading the PDF took longer than 50 ms');
    await expectHealthy();
  });
});
