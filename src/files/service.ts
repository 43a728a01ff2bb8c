import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Knex } from 'knex';
import type { FilesConfig } from '../config.js';
import type { StoredFile } from '../db/file-models.js';
import { findOwned, listOwned } from '../db/owned.js';
import type { Pagination } from '../http/validation.js';
import { NotFoundError, PayloadTooLargeError, RateLimitedError, UnsupportedMediaTypeError, ValidationError } from '../shared/errors.js';
import { IMAGE_TYPES, ImageRejected, type ImageType, type ImageProcessor, type InspectedImage } from './images.js';
import type { FileStorage } from './storage.js';
import type { Attachment } from '../shared/attachments.js';
import { presentAttachment, presentFile, type AttachmentRecord } from './records.js';

/** What an upload hands the service: the client's name for the file and its bytes. */
export interface IncomingFile {
  filename: string;
  bytes: Buffer;
}

/** A rejected image as the client should see it: the wrong type is 415, the rest is invalid input. */
function refusal(err: ImageRejected): Error {
  if (err.reason === 'not_an_image') return new UnsupportedMediaTypeError(err.message);
  return new ValidationError([{ loc: ['body', 'file'], msg: `Value error, ${err.message}`, type: err.reason === 'too_many_pixels' ? 'image_too_large' : 'image_unreadable', input: null }]);
}

/** The client's file name without its directories or control characters, at most 255 characters; a name for a nameless one. */
export function cleanFilename(raw: string, contentType: ImageType): string {
  const base = path.posix.basename(raw.replace(/\\/g, '/')).replace(/[\u0000-\u001f\u007f]/g, '').normalize('NFC').trim();
  return [...base].slice(0, 255).join('') || `image.${IMAGE_TYPES[contentType].extension}`;
}

/**
 * A user's files (DESIGN §15): images only, the type read from the bytes, within FILE_MAX_BYTES
 * and the user's FILE_QUOTA_BYTES. The quota is one row per user, reserved by the statement that
 * records the file, so two uploads at once cannot both pass it. Uploads in progress are bounded
 * (each holds its bytes in memory) per user (UPLOADS_PER_USER) and per process: past either → 429.
 * A slot is held from before the body is read until the upload ends, however it ends.
 */
export class FileService {
  private inFlight = 0;
  private readonly inFlightByUser = new Map<string, number>();

  constructor(
    private readonly knex: Knex,
    private readonly File: typeof StoredFile,
    private readonly storage: FileStorage,
    private readonly images: ImageProcessor,
    private readonly config: FilesConfig,
  ) {}

  get maxUploadBytes(): number {
    return Math.min(this.config.maxBytes, this.config.quotaBytes);
  }

  /** Stores an upload read by `read` (the request body), once the user has room and the process a slot. */
  async upload(userId: string, read: () => Promise<IncomingFile>): Promise<StoredFile> {
    const release = this.takeSlot(userId);
    try {
      // A user already at the quota is refused before the body is read.
      if ((await this.usedBytes(userId)) >= this.config.quotaBytes) throw this.overQuota();
      const incoming = await read();
      const image = await this.images.inspect(incoming.bytes).catch((err: unknown) => {
        throw err instanceof ImageRejected ? refusal(err) : err;
      });
      return await this.record(userId, incoming, image);
    } finally {
      release();
    }
  }

  /** One upload slot of the user's and of the process's, or 429; the returned function gives both back. */
  private takeSlot(userId: string): () => void {
    const mine = this.inFlightByUser.get(userId) ?? 0;
    const { uploadsPerUser } = this.config;
    if (mine >= uploadsPerUser) throw new RateLimitedError(`You already have ${uploadsPerUser} uploads in progress (UPLOADS_PER_USER); retry when one ends`, 1, 'uploads per user');
    if (this.inFlight >= this.images.limits.concurrency * 4) throw new RateLimitedError('Too many uploads are in progress; retry shortly', 1);
    this.inFlight++;
    this.inFlightByUser.set(userId, mine + 1);
    return () => {
      this.inFlight--;
      const left = (this.inFlightByUser.get(userId) ?? 1) - 1;
      if (left > 0) this.inFlightByUser.set(userId, left);
      else this.inFlightByUser.delete(userId);
    };
  }

  private async record(userId: string, incoming: IncomingFile, image: InspectedImage): Promise<StoredFile> {
    const { rendition } = image;
    const id = randomUUID();
    return this.knex.transaction(async (trx) => {
      await this.reserve(trx, userId, incoming.bytes.length);
      const file = await this.File.query(trx).insertAndFetch({
        id,
        user_id: userId,
        filename: cleanFilename(incoming.filename, image.contentType),
        content_type: image.contentType,
        size_bytes: incoming.bytes.length,
        width: image.width,
        height: image.height,
        sha256: createHash('sha256').update(incoming.bytes).digest('hex'),
        rendition: rendition ? { max_side: rendition.maxSide, content_type: rendition.contentType, width: rendition.width, height: rendition.height, size_bytes: rendition.bytes.length } : null,
      });
      await this.storage.put(trx, id, rendition ? { original: incoming.bytes, model: rendition.bytes } : { original: incoming.bytes });
      return file;
    });
  }

  /** Adds `bytes` to the user's usage unless that passes the quota (413 naming it). */
  private async reserve(trx: Knex.Transaction, userId: string, bytes: number): Promise<void> {
    const { rows } = await trx.raw(
      `insert into file_usage as u (user_id, bytes) values (?, ?)
       on conflict (user_id) do update set bytes = u.bytes + excluded.bytes where u.bytes + excluded.bytes <= ?
       returning bytes`,
      [userId, bytes, this.config.quotaBytes],
    );
    if (rows.length === 0 || Number(rows[0].bytes) > this.config.quotaBytes) throw this.overQuota();
  }

  private async usedBytes(userId: string): Promise<number> {
    const row = await this.knex('file_usage').first('bytes').where({ user_id: userId });
    return Number(row?.bytes ?? 0);
  }

  private overQuota(): PayloadTooLargeError {
    return new PayloadTooLargeError(`Your files would exceed your quota of ${this.config.quotaBytes} bytes (FILE_QUOTA_BYTES); delete some first`);
  }

  list(userId: string, page: Pagination) {
    return listOwned(this.File, userId, page, presentFile);
  }

  own(userId: string, id: string): Promise<StoredFile> {
    return findOwned(this.File, userId, id, 'File');
  }

  async content(userId: string, id: string): Promise<{ file: StoredFile; bytes: Buffer }> {
    const file = await this.own(userId, id);
    const bytes = await this.storage.read(file.id, 'original');
    if (!bytes) throw new NotFoundError('File not found');
    return { file, bytes };
  }

  /** Deletes the file and its bytes and gives its size back to the user's quota; messages keep its name. */
  async remove(userId: string, id: string): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const [deleted] = await trx('files').where({ id, user_id: userId }).delete().returning('size_bytes');
      if (!deleted) throw new NotFoundError('File not found');
      await trx('file_usage').where({ user_id: userId }).decrement('bytes', Number(deleted.size_bytes));
    });
    await this.storage.remove(id);
  }

  /**
   * The caller's images for a message, in the order given; an id that is not one (another
   * user's, deleted, never existed) → 422 naming it.
   */
  async attachable(userId: string, ids: string[]): Promise<Attachment[]> {
    if (ids.length === 0) return [];
    const files = await this.File.query().where({ user_id: userId }).whereIn('id', ids);
    const byId = new Map(files.map((f) => [f.id, f]));
    const missing = ids.filter((id) => !byId.has(id));
    if (missing.length > 0) {
      throw new ValidationError(missing.map((id) => ({ loc: ['body', 'image_ids'], msg: `Value error, ${id} is not one of your images (upload it with POST /api/files)`, type: 'value_error', input: id })));
    }
    return ids.map((id) => byId.get(id)!.attachment);
  }

  /** Messages' attachments as history shows them: a deleted file by its name only. */
  async views(userId: string, attachments: Attachment[][]): Promise<AttachmentRecord[][]> {
    const ids = [...new Set(attachments.flat().map((a) => a.id))];
    const existing = ids.length === 0 ? [] : await this.knex('files').where({ user_id: userId }).whereIn('id', ids).pluck('id');
    const present = new Set<string>(existing);
    return attachments.map((list) => list.map((a) => presentAttachment(a, present.has(a.id))));
  }
}
