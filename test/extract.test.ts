import { describe, expect, it } from 'vitest';
import { DEFAULT_EXTRACT_LIMITS, DOCX, extractDocument, PDF } from '../workers/knowledge/extract.js';
import { IngestionError } from '../workers/knowledge/ingestion-error.js';
import { docxWithParagraphs, docxZipBomb, encryptedPdf, notAPdf, pdfClaimingPages, pdfWithPages, pdfWithoutText, truncatedPdf } from './support/documents.js';

/** Reading documents with the real parsers (pdf.js, mammoth) in their bounded thread (DESIGN §14). */
const refusal = async (bytes: Buffer, type: string, limits = DEFAULT_EXTRACT_LIMITS) => {
  const err = await extractDocument(bytes, type, limits).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(IngestionError);
  return (err as Error).message;
};

describe('document text', () => {
  it('a PDF gives one page per page with text, numbered', async () => {
    const pages = await extractDocument(await pdfWithPages(['First page text.', 'Second page, about refunds.', 'Third.']), PDF);
    expect(pages).toEqual([
      { page: 1, text: 'First page text.' },
      { page: 2, text: 'Second page, about refunds.' },
      { page: 3, text: 'Third.' },
    ]);
  });

  it('a DOCX gives its paragraphs, without pages', async () => {
    const [page, ...rest] = await extractDocument(docxWithParagraphs(['Shipping guide', 'Parcels ship in two days & arrive <soon>.']), DOCX);
    expect(rest).toEqual([]);
    expect(page).toEqual({ page: null, text: 'Shipping guide\n\nParcels ship in two days & arrive <soon>.' });
  });

  it('text and HTML as before: UTF-8 only, HTML reduced to text', async () => {
    expect(await extractDocument(Buffer.from('plain'), 'text/plain')).toEqual([{ page: null, text: 'plain' }]);
    expect((await extractDocument(Buffer.from('<p>Hi <b>there</b></p><script>x()</script>'), 'text/html'))[0]!.text).toBe('Hi there');
    expect(await refusal(Buffer.from([0xff, 0xfe]), 'text/plain')).toBe('The document is not valid UTF-8 text');
  });

  it('hostile files are refused with a clear reason, and the next document is read as usual', async () => {
    expect(await refusal(await truncatedPdf(), PDF)).toMatch(/damaged or truncated/);
    expect(await refusal(encryptedPdf(), PDF)).toMatch(/encrypted/);
    expect(await refusal(pdfClaimingPages(100_000), PDF)).toBe('The PDF has 100000 pages; at most 2000 are accepted');
    expect(await refusal(notAPdf(), PDF)).toMatch(/not a PDF/);
    expect(await refusal(await pdfWithoutText(), PDF)).toMatch(/no extractable text/);
    expect(await refusal(Buffer.alloc(0), PDF)).toMatch(/not a PDF/);
    expect(await refusal(docxZipBomb(), DOCX)).toMatch(/zip bomb/);
    expect(await refusal(Buffer.from('PK\u0003\u0004 but no zip after all'), DOCX)).toMatch(/not a valid Word document/);
    expect(await refusal(notAPdf(), DOCX)).toMatch(/not a valid Word document/);
    expect(await refusal(Buffer.from('x'), 'application/x-msdownload')).toMatch(/cannot be read/);
    expect(await extractDocument(await pdfWithPages(['Still reading.']), PDF)).toEqual([{ page: 1, text: 'Still reading.' }]);
  });

  it('a zip bomb that lies about its size is stopped by the thread memory bound, not the process', async () => {
    expect(await refusal(docxZipBomb(300, true), DOCX)).toMatch(/memory|zip bomb|could not be read|not a valid Word document/);
    expect(process.memoryUsage().heapUsed).toBeLessThan(1024 * 1024 * 1024);
  }, 60_000);

  it('a slow read ends at the time bound', async () => {
    const pages = Array.from({ length: 300 }, (_, i) => `Page ${i} `.repeat(40));
    expect(await refusal(await pdfWithPages(pages), PDF, { ...DEFAULT_EXTRACT_LIMITS, timeoutMs: 1 })).toMatch(/took longer than/);
  });
});
