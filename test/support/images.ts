import zlib from 'node:zlib';
import sharp from 'sharp';

/** Images for tests, made with sharp (real encoders) or, for hostile ones, byte by byte. */

const solid = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 200, g: 80, b: 40 } } });

export const png = (width: number, height: number) => solid(width, height).png().toBuffer();
export const jpeg = (width: number, height: number, orientation?: number) => {
  const image = solid(width, height).jpeg({ quality: 80 });
  return (orientation ? image.withMetadata({ orientation }) : image).toBuffer();
};
export const webp = (width: number, height: number) => solid(width, height).webp().toBuffer();
export const gif = (width: number, height: number) => solid(width, height).gif().toBuffer();

/** Two frames, red then blue. */
export async function animatedGif(width: number, height: number): Promise<Buffer> {
  const frame = (r: number, b: number) => sharp({ create: { width, height, channels: 4, background: { r, g: 0, b, alpha: 1 } } }).png().toBuffer();
  return sharp([await frame(255, 0), await frame(0, 255)], { join: { animated: true } }).gif().toBuffer();
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body) >>> 0);
  return Buffer.concat([length, body, crc]);
}

/** A decompression bomb: a few kilobytes of PNG declaring width × height pixels (of zeros). */
export function pngBomb(width = 50_000, height = 50_000): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // greyscale
  const rows = zlib.deflateSync(Buffer.alloc((width + 1) * 64));
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), pngChunk('IHDR', header), pngChunk('IDAT', rows), pngChunk('IEND', Buffer.alloc(0))]);
}

/** The first `fraction` of an image's bytes: its header intact, its pixels cut off. */
export const truncated = (image: Buffer, fraction = 0.6) => image.subarray(0, Math.floor(image.length * fraction));

/** Image dimensions as sharp reads them. */
export async function sizeOf(image: Buffer): Promise<{ format: string; width: number; height: number }> {
  const meta = await sharp(image).metadata();
  return { format: meta.format, width: meta.width, height: meta.height };
}
