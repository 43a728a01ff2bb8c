import { deflateRawSync } from 'node:zlib';
import { PDFDocument, StandardFonts } from 'pdf-lib';

/** Documents for ingestion tests and the benchmark: real PDFs and DOCX files, and hostile ones. */

/** A PDF with a text layer, one page per string (long text wrapped onto lines). */
export async function pdfWithPages(pages: string[]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = pdf.addPage();
    const lines = text.match(/.{1,90}(\s|$)/g) ?? [text];
    lines.slice(0, 60).forEach((line, i) => page.drawText(line.trim(), { x: 40, y: 780 - i * 13, size: 10, font }));
  }
  return Buffer.from(await pdf.save());
}

/** A PDF whose only page is a drawn shape: no text layer (as a scan without OCR). */
export async function pdfWithoutText(): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  pdf.addPage().drawRectangle({ x: 50, y: 50, width: 200, height: 100 });
  return Buffer.from(await pdf.save());
}

/** A PDF cut in half. */
export async function truncatedPdf(): Promise<Buffer> {
  const whole = await pdfWithPages(['A page that will be cut off.', 'Another page.']);
  return whole.subarray(0, Math.floor(whole.length / 3));
}

/** A hand-written PDF of the given objects, with a correct cross-reference table. */
function handWrittenPdf(objects: string[], trailer: string): Buffer {
  let body = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(body));
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body);
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${trailer} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** A PDF protected by a user password (standard security handler, RC4 40-bit). */
export function encryptedPdf(): Buffer {
  const o = '<' + 'a'.repeat(64) + '>';
  const u = '<' + 'b'.repeat(64) + '>';
  return handWrittenPdf(
    ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>', `<< /Filter /Standard /V 1 /R 2 /O ${o} /U ${u} /P -44 >>`],
    '/Encrypt 4 0 R /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>]',
  );
}

/** A small PDF whose page tree claims `pages` pages. */
export function pdfClaimingPages(pages: number): Buffer {
  return handWrittenPdf(['<< /Type /Catalog /Pages 2 0 R >>', `<< /Type /Pages /Kids [3 0 R] /Count ${pages} >>`, '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>'], '');
}

/** PNG bytes (named .pdf by the tests). */
export function notAPdf(): Buffer {
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)]);
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

interface ZipFile {
  name: string;
  data: Buffer;
  /** Overrides the size the directory declares (a lying zip). */
  declaredSize?: number;
  crc?: number;
}

/** A zip of deflated entries. */
function zip(files: ZipFile[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const file of files) {
    const name = Buffer.from(file.name);
    const compressed = deflateRawSync(file.data);
    const size = file.declaredSize ?? file.data.length;
    const crc = file.crc ?? crc32(file.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(8, 10);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(compressed.length, 20);
    entry.writeUInt32LE(size, 24);
    entry.writeUInt16LE(name.length, 28);
    entry.writeUInt32LE(offset, 42);
    locals.push(local, name, compressed);
    central.push(entry, name);
    offset += local.length + name.length + compressed.length;
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
const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const documentXml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`;

/** A minimal valid .docx with one paragraph per string. */
export function docxWithParagraphs(paragraphs: string[]): Buffer {
  const body = paragraphs.map((p) => `<w:p><w:r><w:t xml:space="preserve">${escapeXml(p)}</w:t></w:r></w:p>`).join('');
  return zip([
    { name: '[Content_Types].xml', data: Buffer.from(CONTENT_TYPES) },
    { name: '_rels/.rels', data: Buffer.from(RELS) },
    { name: 'word/document.xml', data: Buffer.from(documentXml(body)) },
  ]);
}

/**
 * A .docx whose document.xml inflates to `megabytes` MB of one repeated paragraph (deflate
 * shrinks it about 1000-fold). With `lie`, the directory declares a tiny size, so only the
 * reading thread's memory bound stops it.
 */
export function docxZipBomb(megabytes = 200, lie = false): Buffer {
  const paragraph = '<w:p><w:r><w:t>boom</w:t></w:r></w:p>';
  const filler = Buffer.alloc(Math.ceil((megabytes * 1024 * 1024) / paragraph.length) * paragraph.length, paragraph);
  const xml = Buffer.concat([Buffer.from(documentXml('')).subarray(0, -22), filler, Buffer.from('</w:body></w:document>')]);
  return zip([
    { name: '[Content_Types].xml', data: Buffer.from(CONTENT_TYPES) },
    { name: '_rels/.rels', data: Buffer.from(RELS) },
    { name: 'word/document.xml', data: xml, ...(lie ? { declaredSize: 4096 } : {}) },
  ]);
}
