import { constants, crc32, deflateRawSync } from 'node:zlib';
import { PDFDocument, StandardFonts } from 'pdf-lib';

/** Documents for ingestion tests and the benchmark: real PDFs and DOCX files, and hostile ones. */

const MB = 1024 * 1024;
const LINE_CHARS = 90;
const LINES_PER_PAGE = 60;

/** Text as the lines a page shows: paragraphs (split at "\n") wrapped at word boundaries; an empty paragraph is a blank line. */
function wrap(text: string): string[] {
  const line = new RegExp(`.{1,${LINE_CHARS}}(?:\\s+|$)|\\S{${LINE_CHARS}}`, 'g');
  return text.split('\n').flatMap((paragraph) => (paragraph.trim() ? (paragraph.match(line) ?? []).map((l) => l.trim()) : ['']));
}

/** A PDF with a text layer (standard Helvetica), one page per string; long text is wrapped onto lines. */
export async function pdfWithPages(pages: string[]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const lines = wrap(text);
    if (lines.length > LINES_PER_PAGE) throw new Error(`pdfWithPages: a page holds ${LINES_PER_PAGE} lines of ${LINE_CHARS} characters; this text needs ${lines.length}`);
    const page = pdf.addPage();
    lines.forEach((line, i) => {
      if (line) page.drawText(line, { x: 40, y: 780 - i * 13, size: 10, font });
    });
  }
  return Buffer.from(await pdf.save());
}

/** A PDF whose only page is a drawn shape: no text layer (as a scan without OCR). */
export async function pdfWithoutText(): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  pdf.addPage().drawRectangle({ x: 50, y: 50, width: 200, height: 100 });
  return Buffer.from(await pdf.save());
}

/** A PDF cut short: its first third. */
export async function truncatedPdf(): Promise<Buffer> {
  const whole = await pdfWithPages(['A page that will be cut off.', 'Another page.']);
  return whole.subarray(0, Math.floor(whole.length / 3));
}

/** A hand-written PDF of the given objects (numbered from 1; the first is the catalog), with a correct cross-reference table. */
function handWrittenPdf(objects: (string | Buffer)[], trailer = ''): Buffer {
  const parts = [Buffer.from('%PDF-1.7\n')];
  let length = parts[0]!.length;
  const offsets = objects.map((object, i) => {
    const part = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), typeof object === 'string' ? Buffer.from(object, 'latin1') : object, Buffer.from('\nendobj\n')]);
    parts.push(part);
    length += part.length;
    return length - part.length;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${trailer} >>\nstartxref\n${length}\n%%EOF\n`));
  return Buffer.concat(parts);
}

const CATALOG = '<< /Type /Catalog /Pages 2 0 R >>';

/** A PDF protected by a user password (standard security handler, RC4 40-bit): pdf.js asks for the password. */
export function encryptedPdf(): Buffer {
  const o = `<${'a'.repeat(64)}>`;
  const u = `<${'b'.repeat(64)}>`;
  return handWrittenPdf(
    [CATALOG, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>', `<< /Filter /Standard /V 1 /R 2 /O ${o} /U ${u} /P -44 >>`],
    '/Encrypt 4 0 R /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>]',
  );
}

/** A small PDF (one real page) whose page tree claims `pages` pages. */
export function pdfClaimingPages(pages: number): Buffer {
  return handWrittenPdf([CATALOG, `<< /Type /Pages /Kids [3 0 R] /Count ${pages} >>`, '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>']);
}

/** PNG bytes (named .pdf by the tests). */
export function notAPdf(): Buffer {
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)]);
}

/**
 * Raw deflate of `chunk` repeated `times` times, without ever holding the whole: a fully flushed
 * block refers to nothing before it, so copies of it in a row inflate to copies of the chunk.
 */
function repeatedDeflate(head: Buffer, chunk: Buffer, times: number, tail: Buffer): Buffer {
  const flushed = (bytes: Buffer) => deflateRawSync(bytes, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  return Buffer.concat([flushed(head), ...new Array<Buffer>(times).fill(flushed(chunk)), deflateRawSync(tail)]);
}

/**
 * A PDF whose page content is a FlateDecode stream of `megabytes` MB of spaces (about 1 KB per
 * MB compressed), listed `references` times in the page's /Contents. Its zlib checksum is left
 * zero: a reader that inflates it all has already lost.
 */
export function pdfFlateBomb(megabytes: number, references = 1): Buffer {
  const text = Buffer.from('BT /F1 12 Tf 72 712 Td (Boom) Tj ET\n');
  const data = Buffer.concat([Buffer.from([0x78, 0xda]), repeatedDeflate(text, Buffer.alloc(MB, ' '), megabytes, Buffer.alloc(0)), Buffer.alloc(4)]);
  const stream = Buffer.concat([Buffer.from(`<< /Length ${data.length} /Filter /FlateDecode >>\nstream\n`), data, Buffer.from('\nendstream')]);
  const page = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [${' 4 0 R'.repeat(references)} ] /Resources << /Font << /F1 5 0 R >> >> >>`;
  return handWrittenPdf([CATALOG, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', page, stream, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>']);
}

interface ZipFile {
  name: string;
  /** Raw-deflated contents. */
  deflated: Buffer;
  crc: number;
  /** What the directory declares the contents inflate to. */
  size: number;
}

const deflatedFile = (name: string, text: string): ZipFile => {
  const data = Buffer.from(text);
  return { name, deflated: deflateRawSync(data), crc: crc32(data), size: data.length };
};

/** A zip of deflated files: local headers, then the central directory and its end record. */
function zip(files: ZipFile[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const file of files) {
    const name = Buffer.from(file.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(file.crc, 14);
    local.writeUInt32LE(file.deflated.length, 18);
    local.writeUInt32LE(file.size, 22);
    local.writeUInt16LE(name.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4); // version made by
    entry.writeUInt16LE(20, 6); // version needed
    entry.writeUInt16LE(8, 10); // deflate
    entry.writeUInt32LE(file.crc, 16);
    entry.writeUInt32LE(file.deflated.length, 20);
    entry.writeUInt32LE(file.size, 24);
    entry.writeUInt16LE(name.length, 28);
    entry.writeUInt32LE(offset, 42);
    locals.push(local, name, file.deflated);
    central.push(entry, name);
    offset += local.length + name.length + file.deflated.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const CONTENT_TYPES = '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const RELS = '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';
const DOCUMENT_HEAD = '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>';
const DOCUMENT_TAIL = '</w:body></w:document>';
const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const packageFiles = () => [deflatedFile('[Content_Types].xml', CONTENT_TYPES), deflatedFile('_rels/.rels', RELS)];

/** A minimal valid .docx with one paragraph per string. */
export function docxWithParagraphs(paragraphs: string[]): Buffer {
  const body = paragraphs.map((p) => `<w:p><w:r><w:t xml:space="preserve">${escapeXml(p)}</w:t></w:r></w:p>`).join('');
  return zip([...packageFiles(), deflatedFile('word/document.xml', DOCUMENT_HEAD + body + DOCUMENT_TAIL)]);
}

/** A .docx whose word/document.xml is `head`, then `chunk` repeated `times` times, then `tail`, declaring `declared` bytes if given. */
function repeatingDocx(head: string, chunk: Buffer, times: number, tail: string, declared?: number): Buffer {
  const [first, last] = [Buffer.from(DOCUMENT_HEAD + head), Buffer.from(tail + DOCUMENT_TAIL)];
  let crc = crc32(first);
  for (let i = 0; i < times; i++) crc = crc32(chunk, crc);
  const size = first.length + times * chunk.length + last.length;
  const document: ZipFile = { name: 'word/document.xml', deflated: repeatedDeflate(first, chunk, times, last), crc: crc32(last, crc), size: declared ?? size };
  return zip([...packageFiles(), document]);
}

const bombs = new Map<boolean, Buffer>();

/**
 * A .docx (about 1 MB) whose word/document.xml inflates to 1 GiB: one paragraph of the letter A
 * repeated. With `lie`, the central directory declares 4 KB instead, so only the reader's bound on
 * what it really inflates stops it.
 */
export function docxZipBomb(lie = false): Buffer {
  let bomb = bombs.get(lie);
  if (!bomb) bombs.set(lie, (bomb = repeatingDocx('<w:p><w:r><w:t>', Buffer.alloc(MB, 'A'), 1024, '</w:t></w:r></w:p>', lie ? 4096 : undefined)));
  return bomb;
}

/** A .docx of `megabytes` MB (honestly declared) of one-letter paragraphs: more objects than a reader's heap holds. */
export function docxOfTinyParagraphs(megabytes: number): Buffer {
  const paragraph = '<w:p><w:r><w:t>x</w:t></w:r></w:p>';
  return repeatingDocx('', Buffer.from(paragraph.repeat(Math.floor(MB / paragraph.length))), megabytes, '');
}
