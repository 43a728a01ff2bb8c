import { parentPort, workerData } from 'node:worker_threads';
import { extractRawText } from 'mammoth';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { TextItem } from 'pdfjs-dist/types/src/display/api.js';
import type { ExtractedPage, ExtractLimits } from './extract.js';

/**
 * The body of the thread that reads one PDF or DOCX (workers/knowledge/extract.ts starts it with
 * a memory bound and a deadline). It answers `{pages}` or `{refusal}` (the document's fault, in
 * words for its `error`); anything else it throws ends the thread, which the caller reports.
 */
export interface ThreadInput {
  bytes: Uint8Array;
  contentType: string;
  limits: ExtractLimits;
}
export type ThreadOutput = { pages: ExtractedPage[] } | { refusal: string };

class Refusal extends Error {}

const PDF_ERRORS: Record<string, string> = {
  PasswordException: 'The PDF is encrypted (password protected); upload an unprotected copy',
  InvalidPDFException: 'The PDF is damaged or truncated and cannot be read',
  FormatError: 'The PDF is damaged or truncated and cannot be read',
};

function pageText(items: unknown[]): string {
  let text = '';
  for (const item of items as TextItem[]) {
    if (typeof item.str !== 'string') continue;
    text += item.str;
    text += item.hasEOL ? '\n' : item.str && !item.str.endsWith(' ') ? ' ' : '';
  }
  return text.replace(/[ \t]+\n/g, '\n').trim();
}

async function readPdf(bytes: Uint8Array, limits: ExtractLimits): Promise<ExtractedPage[]> {
  const task = getDocument({ data: bytes, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, stopAtErrors: true, verbosity: 0 });
  const pdf = await task.promise.catch((err: { name?: string }) => {
    throw new Refusal(PDF_ERRORS[err?.name ?? ''] ?? 'The PDF is damaged or truncated and cannot be read');
  });
  try {
    if (pdf.numPages > limits.maxPages) throw new Refusal(`The PDF has ${pdf.numPages} pages; at most ${limits.maxPages} are accepted`);
    const pages: ExtractedPage[] = [];
    let total = 0;
    for (let number = 1; number <= pdf.numPages; number++) {
      const page = await pdf.getPage(number).catch(() => {
        throw new Refusal(`The PDF is damaged: page ${number} cannot be read`);
      });
      const text = pageText((await page.getTextContent()).items);
      page.cleanup();
      total += text.length;
      if (total > limits.maxTextChars) throw new Refusal(`The PDF holds more than ${limits.maxTextChars} characters of text; split it into smaller documents`);
      if (text) pages.push({ page: number, text });
    }
    if (pages.length === 0) throw new Refusal('The PDF has no extractable text (it may be scanned images; run OCR on it first)');
    return pages;
  } finally {
    await pdf.destroy();
  }
}

async function readDocx(bytes: Uint8Array, limits: ExtractLimits): Promise<ExtractedPage[]> {
  const { value } = await extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) }).catch(() => {
    throw new Refusal('The DOCX file is not a valid Word document');
  });
  const text = value.replace(/\n{3,}/g, '\n\n').trim();
  if (text.length > limits.maxTextChars) throw new Refusal(`The DOCX holds more than ${limits.maxTextChars} characters of text; split it into smaller documents`);
  return text ? [{ page: null, text }] : [];
}

async function main({ bytes, contentType, limits }: ThreadInput): Promise<ThreadOutput> {
  try {
    return { pages: contentType === 'application/pdf' ? await readPdf(bytes, limits) : await readDocx(bytes, limits) };
  } catch (err) {
    if (err instanceof Refusal) return { refusal: err.message };
    throw err;
  }
}

parentPort!.postMessage(await main(workerData as ThreadInput));
