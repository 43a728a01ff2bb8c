import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { convert } from 'html-to-text';
import { IngestionError } from './ingestion-error.js';
import { DOCX, PDF, type ExtractedPage, type ExtractLimits, type ThreadAnswer, type ThreadJob } from './extract-protocol.js';

export { DOCX, PDF, type ExtractedPage, type ExtractLimits } from './extract-protocol.js';

export const DEFAULT_EXTRACT_LIMITS: ExtractLimits = { maxPages: 2000, timeoutMs: 60_000, maxTextChars: 5_000_000, maxUncompressedBytes: 50 * 1024 * 1024 };

const TEXT_TYPES = ['text/plain', 'text/markdown', 'text/html'];

/** Uploaded bytes → text, by content type (the web chose it from the file name; the bytes are checked here). */
export async function extractDocument(bytes: Buffer, contentType: string, limits: ExtractLimits = DEFAULT_EXTRACT_LIMITS): Promise<ExtractedPage[]> {
  if (TEXT_TYPES.includes(contentType)) return [{ page: null, text: extractText(bytes, contentType) }];
  if (contentType === PDF) {
    // Where pdf.js looks for the header too: some producers put a few bytes before it.
    if (!bytes.subarray(0, 1024).includes('%PDF-')) throw new IngestionError('The file is not a PDF (it does not start with %PDF-)');
    return inThread(bytes, 'PDF', contentType, limits);
  }
  if (contentType === DOCX) return inThread(bytes, 'DOCX', contentType, limits);
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

// ---- the reading threads ----

/** The reading thread's heap: a parser fed a lying zip or a hostile PDF runs out of it, not the worker. */
const THREAD_HEAP_MB = 256;
/** Threads kept warm between documents (one per concurrent ingestion): starting one and loading pdf.js costs ~250 ms. */
const SPARE_THREADS = 2;
const SPARE_IDLE_MS = 30_000;
/** A thread is replaced after this many documents, so nothing one leaves behind accumulates for long. */
const DOCUMENTS_PER_THREAD = 50;

interface Reader {
  thread: Worker;
  documents: number;
  idle?: NodeJS.Timeout;
}
const spare: Reader[] = [];
let entry: URL | undefined;

/**
 * The compiled thread beside this file. Under vitest this file is the TypeScript source, which a
 * thread cannot load, so it is the build's copy in dist/ (npm test builds first).
 */
function threadEntry(): URL {
  if (entry) return entry;
  const here = new URL(import.meta.url);
  if (!here.pathname.endsWith('.ts')) return (entry = new URL('./extract-thread.js', here));
  const built = new URL('../../dist/workers/knowledge/extract-thread.js', here);
  if (!existsSync(fileURLToPath(built))) throw new Error(`${fileURLToPath(built)} is missing: run npm run build`);
  return (entry = built);
}

function takeReader(): Reader {
  const reader = spare.pop();
  if (reader) {
    clearTimeout(reader.idle);
    reader.thread.ref();
    return reader;
  }
  const thread = new Worker(threadEntry(), { resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB, maxYoungGenerationSizeMb: 32 } });
  const created: Reader = { thread, documents: 0 };
  // Jobs listen for themselves; these keep a spare thread that dies from taking the process with it.
  thread.on('error', () => undefined).on('exit', () => retire(created));
  return created;
}

function retire(reader: Reader): void {
  clearTimeout(reader.idle);
  const at = spare.indexOf(reader);
  if (at >= 0) spare.splice(at, 1);
  void reader.thread.terminate();
}

/** Keeps a thread that read a document well for the next one (a thread that met trouble is never reused). */
function giveBack(reader: Reader): void {
  if (spare.length >= SPARE_THREADS || ++reader.documents >= DOCUMENTS_PER_THREAD) return retire(reader);
  reader.thread.unref();
  reader.idle = setTimeout(() => retire(reader), SPARE_IDLE_MS).unref();
  spare.push(reader);
}

const duration = (ms: number) => (ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`);

function crashReason(kind: string, err: Error & { code?: string }): string {
  if (err.code === 'ERR_WORKER_OUT_OF_MEMORY' || /memory|Invalid string length|Array buffer allocation/i.test(err.message)) {
    return `The ${kind} needs more memory to read than a document may use (${THREAD_HEAP_MB} MB); refused as a possible ${kind === 'DOCX' ? 'zip' : 'decompression'} bomb`;
  }
  return `The ${kind} could not be read: ${err.message}`;
}

/** Reads a PDF or DOCX in a thread bounded in memory and time; its crash, exhaustion or timeout fails the document. */
function inThread(bytes: Buffer, kind: 'PDF' | 'DOCX', contentType: string, limits: ExtractLimits): Promise<ExtractedPage[]> {
  const reader = takeReader();
  const { thread } = reader;
  return new Promise((resolve, reject) => {
    const finish = (keep: boolean, outcome: () => void) => {
      clearTimeout(timer);
      thread.off('message', onAnswer).off('error', onError).off('exit', onExit);
      if (keep) giveBack(reader);
      else retire(reader);
      outcome();
    };
    const refuse = (reason: string) => finish(false, () => reject(new IngestionError(reason)));
    const onAnswer = (answer: ThreadAnswer) => {
      if ('pages' in answer) finish(true, () => resolve(answer.pages));
      else refuse('refusal' in answer ? answer.refusal : `The ${kind} could not be read: ${answer.crash}`);
    };
    const onError = (err: Error) => refuse(crashReason(kind, err));
    const onExit = (code: number) => refuse(`The ${kind} could not be read (the reader stopped with code ${code})`);
    const timer = setTimeout(() => refuse(`Reading the ${kind} took longer than ${duration(limits.timeoutMs)}`), limits.timeoutMs);
    thread.on('message', onAnswer).on('error', onError).on('exit', onExit);
    const copy = new Uint8Array(bytes); // its own buffer, handed over to the thread
    thread.postMessage({ bytes: copy, contentType, limits } satisfies ThreadJob, [copy.buffer as ArrayBuffer]);
  });
}
