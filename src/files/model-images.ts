import type { StoredFile } from '../db/file-models.js';
import type { Attachment } from '../shared/attachments.js';
import type { ImageProcessor, ImageType } from './images.js';
import type { FileStorage } from './storage.js';

/** An image as a model request carries it. */
export interface InlineImage {
  mimeType: ImageType;
  /** Base64 of the bytes. */
  data: string;
}

/** Where a model call gets an attached image's bytes; undefined when the file is gone. */
export interface ImageSource {
  inline(image: Attachment): Promise<InlineImage | undefined>;
}

/**
 * The bytes a model is sent for an image (DESIGN §15): the rendition made at upload when it was
 * made for this IMAGE_MAX_SIDE, the original when that fits, otherwise a copy downscaled now (the
 * setting changed since the upload).
 */
export class ModelImages {
  constructor(
    private readonly File: typeof StoredFile,
    private readonly storage: FileStorage,
    private readonly processor: ImageProcessor,
  ) {}

  /** The run's view: each image read at most once per attempt, however many model calls show it. */
  forRun(userId: string): ImageSource {
    const read = new Map<string, Promise<InlineImage | undefined>>();
    return {
      inline: (image) => {
        let pending = read.get(image.id);
        if (!pending) read.set(image.id, (pending = this.inline(userId, image.id)));
        return pending;
      },
    };
  }

  private async inline(userId: string, fileId: string): Promise<InlineImage | undefined> {
    const file = await this.File.query().findOne({ id: fileId, user_id: userId });
    if (!file) return undefined;
    const { maxSide } = this.processor.limits;
    if (file.rendition?.max_side === maxSide) return this.read(file.id, 'model', file.rendition.content_type);
    if (!file.rendition && Math.max(file.width, file.height) <= maxSide) return this.read(file.id, 'original', file.content_type);
    const original = await this.storage.read(file.id, 'original');
    if (!original) return undefined;
    const rendition = await this.processor.downscale(original, file.content_type, maxSide);
    return { mimeType: rendition.contentType, data: rendition.bytes.toString('base64') };
  }

  private async read(fileId: string, variant: 'original' | 'model', mimeType: ImageType): Promise<InlineImage | undefined> {
    const data = await this.storage.readBase64(fileId, variant);
    return data === undefined ? undefined : { mimeType, data };
  }
}
