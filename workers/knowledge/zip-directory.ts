/**
 * Reads a zip's central directory without inflating anything: the entry names and the sizes they
 * declare. Enough to refuse what is not a zip, or what says it expands too far, before a parser
 * inflates it (declared sizes can lie: the reading thread's memory bound catches the rest).
 */
export interface ZipEntry {
  name: string;
  uncompressedBytes: number;
}

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const MAX_COMMENT = 0xffff;
/** ZIP64 marks sizes it keeps elsewhere: more than 4 GiB somewhere, so treat it as that. */
const ZIP64 = 0xffffffff;

function endOfDirectory(bytes: Buffer): number {
  const lowest = Math.max(0, bytes.length - 22 - MAX_COMMENT);
  for (let at = bytes.length - 22; at >= lowest; at--) if (bytes.readUInt32LE(at) === END_OF_DIRECTORY) return at;
  return -1;
}

/** The entries, or undefined when the bytes are not a readable zip. */
export function zipEntries(bytes: Buffer): ZipEntry[] | undefined {
  if (bytes.length < 22 || bytes.readUInt32LE(0) !== 0x04034b50) return undefined;
  const end = endOfDirectory(bytes);
  if (end < 0) return undefined;
  const count = bytes.readUInt16LE(end + 10);
  let at = bytes.readUInt32LE(end + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== DIRECTORY_ENTRY) return undefined;
    const size = bytes.readUInt32LE(at + 24);
    const nameLength = bytes.readUInt16LE(at + 28);
    const skip = nameLength + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32);
    if (at + 46 + nameLength > bytes.length) return undefined;
    entries.push({ name: bytes.toString('utf8', at + 46, at + 46 + nameLength), uncompressedBytes: size === ZIP64 ? Number.MAX_SAFE_INTEGER : size });
    at += 46 + skip;
  }
  return entries;
}
