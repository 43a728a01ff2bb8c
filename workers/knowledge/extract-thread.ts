import { parentPort } from 'node:worker_threads';
import { constants, inflateRawSync } from 'node:zlib';
import type { PDFDocumentProxy, TextItem, TextMarkedContent } from 'pdfjs-dist/types/src/display/api.js';
import { PDF, type ExtractedPage, type ExtractLimits, type ThreadAnswer, type ThreadJob } from './extract-protocol.js';

/**
 * The body of a thread that reads PDF and DOCX documents, one at a time, for
 * workers/knowledge/extract.ts (which bounds its heap and its time, and may reuse it). Each job is
 * answered with its pages, a refusal (the document's fault, in words for its `error`) or a crash.
 */
class Refusal extends Error {}

const MB = 1024 * 1024;
const mb = (bytes: number) => Math.round(bytes / MB);

/**
 * resourceLimits bound this thread's V8 heap, not the buffers outside it where pdf.js inflates
 * streams: Uint8Arrays that double as they fill, and DecompressionStream chunks gathered before
 * being copied (many at once for a page whose contents repeat one stream). A flate bomb would grow
 * the whole process by gigabytes. So while a document is read no buffer may pass `bufferBound`,
 * nor this thread's live buffers `externalBound`; pdf.js catches what the guards throw, hence the flag.
 */
let bufferBound = Infinity;
let externalBound = Infinity;
let bufferRefused = false;
/** Bytes allocated since this thread's live buffers were last measured (measuring costs microseconds). */
let unmeasured = 0;

/** Whether a buffer may grow to `size`, `incoming` bytes of it new; once one may not, none may. */
function allowed(size: number, incoming: number): boolean {
  unmeasured += incoming;
  if (!bufferRefused && size <= bufferBound && (unmeasured < MB || measure())) return true;
  bufferRefused = true;
  return false;
}

function measure(): boolean {
  unmeasured = 0;
  return process.memoryUsage().arrayBuffers <= externalBound;
}

function guard<T extends Uint8ArrayConstructor | ArrayBufferConstructor>(constructor: T): T {
  return new Proxy(constructor, {
    construct(target, args: unknown[], newTarget) {
      const size = typeof args[0] === 'number' ? args[0] : 0;
      if (!allowed(size, size)) throw new RangeError(`a buffer of ${size} bytes is past this document's bound`);
      return Reflect.construct(target, args, newTarget) as object;
    },
  });
}
globalThis.Uint8Array = guard(Uint8Array);
globalThis.ArrayBuffer = guard(ArrayBuffer);

const NativeDecompressionStream = globalThis.DecompressionStream;
/**
 * Native inflaters open at once (each holds native state the guards do not see); past this pdf.js
 * falls back to its own, guarded, inflater. One that fails midway is not counted back: the rest of
 * that document then inflates in JavaScript, which is slower but bounded all the same.
 */
const MAX_OPEN_INFLATERS = 8;
let openInflaters = 0;

class BoundedDecompressionStream {
  readonly writable: WritableStream<BufferSource>;
  readonly readable: ReadableStream<Uint8Array>;

  constructor(format: CompressionFormat) {
    if (openInflaters >= MAX_OPEN_INFLATERS) throw new RangeError('too many streams inflating at once');
    const inner = new NativeDecompressionStream(format);
    openInflaters++;
    let total = 0;
    const count = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        total += chunk.byteLength;
        if (allowed(total, chunk.byteLength)) return controller.enqueue(chunk);
        openInflaters--;
        controller.error(new RangeError(`a stream inflating past this document's bound`));
      },
      flush: () => void openInflaters--,
    });
    this.writable = inner.writable;
    this.readable = inner.readable.pipeThrough(count);
  }
}
globalThis.DecompressionStream = BoundedDecompressionStream as typeof DecompressionStream;

// ---- PDF ----

const PDF_REFUSALS: Record<string, string> = {
  PasswordException: 'The PDF is encrypted (password protected); upload an unprotected copy',
  InvalidPDFException: 'The PDF is damaged or truncated',
};
const DAMAGED = 'The PDF is damaged or truncated';

/** Untyped module (pdf.js ships no declarations for it). */
const PDF_WORKER_MODULE = 'pdfjs-dist/legacy/build/pdf.worker.mjs';

async function pdfjs() {
  // Handing pdf.js its worker module makes it parse in this thread, with no worker script to locate.
  (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker ??= await import(PDF_WORKER_MODULE);
  return import('pdfjs-dist/legacy/build/pdf.mjs');
}

/**
 * The largest page count any page tree states in plain sight. pdf.js replaces a count that the
 * tree does not hold with the pages really there, so this is what answers a false claim by name.
 * The bounded gaps keep the scan linear on hostile bytes.
 */
function claimedPages(bytes: Uint8Array): number {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  let most = 0;
  for (const match of text.matchAll(/\/Type\s{0,32}\/Pages\b[^>]{0,400}?\/Count\s{1,32}(\d{1,12})|\/Count\s{1,32}(\d{1,12})[^>]{0,400}?\/Type\s{0,32}\/Pages\b/g)) {
    most = Math.max(most, Number(match[1] ?? match[2]));
  }
  return most;
}

/** A page's text: pdf.js puts spaces in the gaps it sees and marks line ends; a wide gap between lines starts a paragraph. */
function pageText(items: (TextItem | TextMarkedContent)[]): string {
  let text = '';
  let lineY: number | undefined;
  for (const item of items) {
    if (!('str' in item)) continue;
    if (item.str.trim()) {
      const y = item.transform[5] as number;
      if (text.endsWith('\n') && lineY !== undefined && Math.abs(lineY - y) > 1.6 * item.height) text += '\n';
      lineY = y;
    }
    text += item.str;
    if (item.hasEOL) text += '\n';
  }
  return text.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}

async function textOfPage(pdf: PDFDocumentProxy, number: number): Promise<string> {
  try {
    const page = await pdf.getPage(number);
    const { items } = await page.getTextContent();
    page.cleanup();
    return pageText(items);
  } catch {
    throw new Refusal(`${DAMAGED}: page ${number} cannot be read`);
  }
}

async function readPdf(bytes: Uint8Array, limits: ExtractLimits): Promise<ExtractedPage[]> {
  const claimed = claimedPages(bytes);
  if (claimed > limits.maxPages) throw new Refusal(`The PDF has ${claimed} pages; at most ${limits.maxPages} are accepted`);
  const { getDocument } = await pdfjs();
  const options = { isEvalSupported: false, disableFontFace: true, useSystemFonts: false, useWorkerFetch: false, useWasm: false, isOffscreenCanvasSupported: false, isImageDecoderSupported: false, verbosity: 0 };
  const pdf = await getDocument({ data: bytes, ...options }).promise.catch((err: { name?: string }) => {
    throw new Refusal(PDF_REFUSALS[err?.name ?? ''] ?? DAMAGED);
  });
  try {
    if (pdf.numPages > limits.maxPages) throw new Refusal(`The PDF has ${pdf.numPages} pages; at most ${limits.maxPages} are accepted`);
    const pages: ExtractedPage[] = [];
    let total = 0;
    for (let number = 1; number <= pdf.numPages; number++) {
      const text = await textOfPage(pdf, number);
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

// ---- DOCX ----

const NOT_WORD = 'The DOCX file is not a valid Word document';

interface ZipPart {
  name: string;
  method: number;
  declaredBytes: number;
  data: Buffer;
}

/** The parts a zip's central directory lists, as mammoth's zip reader finds them. */
function zipParts(zip: Buffer): ZipPart[] {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (zip.length < 22 || zip.readUInt32LE(0) !== 0x04034b50 || end < 0 || end + 22 > zip.length) throw new Refusal(NOT_WORD);
  const parts: ZipPart[] = [];
  let at = zip.readUInt32LE(end + 16);
  for (let count = zip.readUInt16LE(end + 10); count > 0; count--) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== 0x02014b50) throw new Refusal(NOT_WORD);
    const nameLength = zip.readUInt16LE(at + 28);
    const local = zip.readUInt32LE(at + 42);
    if (local + 30 > zip.length) throw new Refusal(NOT_WORD);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + zip.readUInt32LE(at + 20));
    parts.push({ name: zip.toString('utf8', at + 46, at + 46 + nameLength), method: zip.readUInt16LE(at + 10), declaredBytes: zip.readUInt32LE(at + 24), data });
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return parts;
}

/** Bytes a part inflates to, but never more than `most` + 1 of them. */
function inflatedBytes(part: ZipPart, most: number): number {
  if (part.method === 0) return part.data.length;
  try {
    return inflateRawSync(part.data, { maxOutputLength: most + 1, finishFlush: constants.Z_SYNC_FLUSH }).length;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return most + 1;
    throw new Refusal(NOT_WORD);
  }
}

/** Refuses a zip bomb by what it declares, then by what it really inflates to (declarations can lie). */
function checkZip(zip: Buffer, limits: ExtractLimits): void {
  const parts = zipParts(zip);
  if (!parts.some((p) => p.name === 'word/document.xml')) throw new Refusal(NOT_WORD);
  const bomb = new Refusal(`The DOCX expands to more than ${mb(limits.maxUncompressedBytes)} MB; refused as a possible zip bomb`);
  if (parts.reduce((sum, p) => sum + p.declaredBytes, 0) > limits.maxUncompressedBytes) throw bomb;
  let left = limits.maxUncompressedBytes;
  for (const part of parts) {
    left -= inflatedBytes(part, left);
    if (left < 0) throw bomb;
  }
}

async function readDocx(bytes: Uint8Array, limits: ExtractLimits): Promise<ExtractedPage[]> {
  const zip = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  checkZip(zip, limits);
  const { extractRawText } = await import('mammoth');
  const { value } = await extractRawText({ buffer: zip }).catch(() => {
    throw new Refusal(NOT_WORD);
  });
  const text = value.replace(/\n{3,}/g, '\n\n').trim();
  if (text.length > limits.maxTextChars) throw new Refusal(`The DOCX holds more than ${limits.maxTextChars} characters of text; split it into smaller documents`);
  return text ? [{ page: null, text }] : [];
}

// ---- the thread ----

async function read({ bytes, contentType, limits }: ThreadJob): Promise<ThreadAnswer> {
  const kind = contentType === PDF ? 'PDF' : 'DOCX';
  // Room for the document itself (pdf.js may copy it) and for what may honestly inflate from it.
  bufferBound = Math.max(limits.maxUncompressedBytes, 2 * bytes.byteLength);
  externalBound = 4 * bufferBound;
  bufferRefused = false;
  unmeasured = openInflaters = 0;
  let answer: ThreadAnswer;
  try {
    answer = { pages: kind === 'PDF' ? await readPdf(bytes, limits) : await readDocx(bytes, limits) };
  } catch (err) {
    answer = err instanceof Refusal ? { refusal: err.message } : { crash: err instanceof Error ? err.message : String(err) };
  }
  if (bufferRefused) answer = { refusal: `The ${kind} expands to more than ${mb(bufferBound)} MB; refused as a possible decompression bomb` };
  bufferBound = externalBound = Infinity;
  return answer;
}

parentPort!.on('message', (job: ThreadJob) => {
  void read(job).then((answer) => parentPort!.postMessage(answer));
});
