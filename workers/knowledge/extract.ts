import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { convert } from 'html-to-text';
import { IngestionError } from './ingestion-error.js';
import { zipEntries } from './zip-directory.js';
import type { ThreadInput, ThreadOutput } from './extract-thread.js';

/** Text of a document: a page per PDF page (1-based); one page `null` for formats without pages. */
export interface ExtractedPage {
  page: number | null;
  text: string;
}

export interface ExtractLimits {
  /** Most pages a PDF may have (checked before any page is read). */
  maxPages: number;
  /** How long reading one PDF or DOCX may take. */
  timeoutMs: number;
  /** Most characters of text one document may hold. */
  maxTextChars: number;
  /** Most bytes a DOCX's contents may declare when inflated. */
  maxUncompressedBytes: number;
}

export const DEFAULT_EXTRACT_LIMITS: ExtractLimits = { maxPages: 2000, timeoutMs: 60_000, maxTextChars: 5_000_000, maxUncompressedBytes: 50 * 1024 * 1024 };

export const PDF = 'application/pdf';
export const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
/** The reading thread's heap: a parser fed a lying zip or a hostile PDF runs out of it, not the worker. */
const THREAD_HEAP_MB = 256;

/** Uploaded bytes → text, by content type (the web chose it from the file name; the bytes are checked here). */
export async function extractDocument(bytes: Buffer, contentType: string, limits: ExtractLimits = DEFAULT_EXTRACT_LIMITS): Promise<ExtractedPage[]> {
  if (contentType === PDF) {
    if (!bytes.subarray(0, 1024).includes('%PDF-')) throw new IngestionError('The file is not a PDF (it does not start with %PDF-)');
    const claimed = claimedPages(bytes);
    if (claimed > limits.maxPages) throw new IngestionError(`The PDF has ${claimed} pages; at most ${limits.maxPages} are accepted`);
    return inThread(bytes, contentType, limits);
  }
  if (contentType === DOCX) {
    checkDocx(bytes, limits);
    return inThread(bytes, contentType, limits);
  }
  if (['text/plain', 'text/markdown', 'text/html'].includes(contentType)) return [{ page: null, text: extractText(bytes, contentType) }];
  throw new IngestionError(`Documents of type ${contentType} cannot be read`);
}

/** Text, Markdown and HTML: only valid UTF-8 is accepted; HTML is reduced to its text. */
export function extractText(source: Buffer, contentType: string): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(source);
  } catch {
    throw new IngestionError('The document is not valid UTF-8 text');
  }
  if (text.includes('\u0000')) throw new IngestionError('The document contains NUL bytes; it looks binary, not text');
  return contentType === 'text/html' ? convert(text, { wordwrap: false, selectors: [{ selector: 'a', options: { ignoreHref: true } }, { selector: 'img', format: 'skip' }] }) : text;
}

/**
 * The largest page count the PDF's page trees state in plain sight. pdf.js checks a count against
 * the pages really there, so a false claim cannot make it loop; this answers a big one (true or
 * not) at once, by name, without a thread. Counts inside compressed object streams are left to pdf.js.
 */
function claimedPages(bytes: Buffer): number {
  let most = 0;
  for (const match of bytes.toString('latin1').matchAll(/\/Type\s*\/Pages\b[^>]*?\/Count\s+(\d{1,12})|\/Count\s+(\d{1,12})[^>]*?\/Type\s*\/Pages\b/g)) {
    most = Math.max(most, Number(match[1] ?? match[2]));
  }
  return most;
}

function checkDocx(bytes: Buffer, limits: ExtractLimits): void {
  const entries = zipEntries(bytes);
  if (!entries || !entries.some((e) => e.name === 'word/document.xml')) throw new IngestionError('The DOCX file is not a valid Word document');
  const declared = entries.reduce((sum, e) => sum + e.uncompressedBytes, 0);
  if (declared > limits.maxUncompressedBytes) {
    throw new IngestionError(`The DOCX expands to more than ${Math.round(limits.maxUncompressedBytes / 1024 / 1024)} MB; refused as a possible zip bomb`);
  }
}

/** The compiled thread next to this file; under vitest (TypeScript sources) the build's copy in dist/. */
function threadEntry(): URL {
  const here = new URL(import.meta.url);
  if (!here.pathname.endsWith('.ts')) return new URL('./extract-thread.js', here);
  const built = new URL('../../dist/workers/knowledge/extract-thread.js', here);
  if (!existsSync(fileURLToPath(built))) throw new Error('dist/workers/knowledge/extract-thread.js is missing: run npm run build');
  return built;
}

/** Reads a PDF or DOCX in a thread bounded in memory and time; its crash, exhaustion or timeout fails the document. */
function inThread(bytes: Buffer, contentType: string, limits: ExtractLimits): Promise<ExtractedPage[]> {
  const input: ThreadInput = { bytes: new Uint8Array(bytes), contentType, limits };
  const kind = contentType === PDF ? 'PDF' : 'DOCX';
  return new Promise((resolve, reject) => {
    const thread = new Worker(threadEntry(), { workerData: input, resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB, maxYoungGenerationSizeMb: 32 }, stdout: true, stderr: true });
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void thread.terminate();
      outcome();
    };
    const timer = setTimeout(() => finish(() => reject(new IngestionError(`Reading the ${kind} took longer than ${Math.round(limits.timeoutMs / 1000)} s`))), limits.timeoutMs);
    thread.once('message', (output: ThreadOutput) => finish(() => ('refusal' in output ? reject(new IngestionError(output.refusal)) : resolve(output.pages))));
    thread.once('error', (err: Error & { code?: string }) => {
      const memory = err.code === 'ERR_WORKER_OUT_OF_MEMORY' || /memory|Invalid string length/i.test(err.message);
      finish(() => reject(new IngestionError(memory ? `The ${kind} needs more memory to read than a document may use (${THREAD_HEAP_MB} MB); refused as a possible zip bomb` : `The ${kind} could not be read: ${err.message}`)));
    });
    thread.once('exit', (code) => finish(() => reject(new IngestionError(`The ${kind} could not be read (the reader stopped with code ${code})`))));
  });
}
