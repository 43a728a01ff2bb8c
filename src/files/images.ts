import type { Sharp, SharpOptions } from 'sharp';
import pLimit, { type LimitFunction } from 'p-limit';
import type { FilesConfig } from '../config.js';
import { IMAGE_TYPES, type ImageType } from '../shared/image-types.js';

export { IMAGE_TYPES, type ImageType } from '../shared/image-types.js';

const isImageType = (mime: string | undefined): mime is ImageType => mime !== undefined && mime in IMAGE_TYPES;

/** Why bytes were refused as an image: not one of the four types, more pixels than allowed, or not decodable. */
export class ImageRejected extends Error {
  constructor(
    readonly reason: 'not_an_image' | 'too_many_pixels' | 'unreadable',
    message: string,
  ) {
    super(message);
  }
}

/** A smaller copy of an image, made for models when the original is larger than IMAGE_MAX_SIDE. */
export interface Rendition {
  bytes: Buffer;
  contentType: ImageType;
  width: number;
  height: number;
  /** The IMAGE_MAX_SIDE it was made for. */
  maxSide: number;
}

export interface InspectedImage {
  contentType: ImageType;
  /** As the image is shown (EXIF orientation applied). */
  width: number;
  height: number;
  /** Present when a model must not be sent the original: larger than maxSide, animated, or rotated by EXIF. */
  rendition?: Rendition;
}

export interface ImageLimits {
  /** A model is sent images no larger than this on their longer side. */
  maxSide: number;
  /** Most pixels an image may declare (checked from its header, before any decoding). */
  maxPixels: number;
  /** Images decoded at once. */
  concurrency: number;
}

export const imageLimits = (files: FilesConfig): ImageLimits => ({ maxSide: files.imageMaxSide, maxPixels: files.imageMaxPixels, concurrency: files.imageConcurrency });

/** A rendition keeps the original's type, except GIF (its first frame as PNG: models take still images). */
const RENDITION_TYPE: Record<ImageType, ImageType> = { 'image/png': 'image/png', 'image/jpeg': 'image/jpeg', 'image/webp': 'image/webp', 'image/gif': 'image/png' };

let loadingSharp: Promise<typeof import('sharp')> | undefined;
/** sharp and file-type (~0.1 CPU-second to import) load with the first image, not with every web and worker process. */
function sharpFor(bytes: Buffer, options: SharpOptions): Promise<Sharp> {
  loadingSharp ??= import('sharp').then((loaded) => {
    // libvips' operation cache would hold decoded images between unrelated requests.
    loaded.default.cache(false);
    return loaded;
  });
  return loadingSharp.then(({ default: sharp }) => sharp(bytes, options));
}

const fileTypeFromBuffer = async (bytes: Buffer) => (await import('file-type')).fileTypeFromBuffer(bytes);

/**
 * Reads images with libvips (sharp): the type from the bytes (file-type, never the client's
 * word), the size from the header (so a decompression bomb is refused unread), then one decode
 * that either proves the image whole or makes its model rendition. Decodes run at most
 * `concurrency` at a time per process.
 */
export class ImageProcessor {
  private readonly limit: LimitFunction;

  constructor(readonly limits: ImageLimits) {
    this.limit = pLimit(limits.concurrency);
  }

  async inspect(bytes: Buffer): Promise<InspectedImage> {
    const detected = await fileTypeFromBuffer(bytes);
    if (!isImageType(detected?.mime)) {
      const found = detected ? `${detected.mime} content` : 'content of no image type';
      throw new ImageRejected('not_an_image', `The file is ${found}; only PNG, JPEG, WebP and GIF images are accepted`);
    }
    const contentType = detected.mime;
    const meta = await this.header(bytes);
    const width = meta.autoOrient.width;
    const height = meta.autoOrient.height;
    const { maxSide, maxPixels } = this.limits;
    if (meta.width * meta.height > maxPixels) {
      throw new ImageRejected('too_many_pixels', `The image declares ${meta.width}×${meta.height} pixels; at most ${maxPixels} pixels are accepted (IMAGE_MAX_PIXELS)`);
    }
    const rotated = (meta.orientation ?? 1) !== 1;
    const animated = (meta.pages ?? 1) > 1;
    if (Math.max(width, height) <= maxSide && !rotated && !animated) {
      await this.verify(bytes);
      return { contentType, width, height };
    }
    return { contentType, width, height, rendition: await this.downscale(bytes, contentType, maxSide) };
  }

  /** The image fitted within `maxSide` (never enlarged), upright, first frame only. */
  downscale(bytes: Buffer, contentType: ImageType, maxSide: number): Promise<Rendition> {
    return this.decoding(async () => {
      const type = RENDITION_TYPE[contentType];
      const pipeline = (await this.open(bytes)).autoOrient().resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true });
      const encoded = type === 'image/jpeg' ? pipeline.jpeg({ quality: 85 }) : type === 'image/webp' ? pipeline.webp({ quality: 85 }) : pipeline.png({ compressionLevel: 6 });
      const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
      return { bytes: data, contentType: type, width: info.width, height: info.height, maxSide };
    });
  }

  private async header(bytes: Buffer) {
    try {
      // The header only: sizes are checked against IMAGE_MAX_PIXELS here, not by libvips' own limit.
      return await (await sharpFor(bytes, { limitInputPixels: false })).metadata();
    } catch (err) {
      throw new ImageRejected('unreadable', `The image could not be read: ${(err as Error).message}`);
    }
  }

  /**
   * Decodes the whole image without keeping it: a truncated or corrupt one fails here. A small
   * output lets JPEG and WebP decode at a reduced scale (every byte is still read).
   */
  private verify(bytes: Buffer): Promise<void> {
    return this.decoding(async () => {
      await (await this.open(bytes)).resize(64, 64, { fit: 'inside' }).raw().toBuffer();
    });
  }

  private open(bytes: Buffer): Promise<Sharp> {
    return sharpFor(bytes, { failOn: 'error', limitInputPixels: this.limits.maxPixels });
  }

  private decoding<T>(work: () => Promise<T>): Promise<T> {
    return this.limit(async () => {
      try {
        return await work();
      } catch (err) {
        throw new ImageRejected('unreadable', `The image is damaged or truncated: ${(err as Error).message}`);
      }
    });
  }
}
