import { Model } from 'objection';
import type { ImageType } from '../shared/image-types.js';
import type { Attachment } from '../shared/attachments.js';

/** The model rendition's facts (DESIGN §15): made for `max_side`, sent instead of the original. */
export interface RenditionRecord {
  max_side: number;
  content_type: ImageType;
  width: number;
  height: number;
  size_bytes: number;
}

/** An uploaded image: its record; the bytes are in the file storage. */
export class StoredFile extends Model {
  static override tableName = 'files';
  id!: string;
  user_id!: string;
  filename!: string;
  content_type!: ImageType;
  size_bytes!: number;
  width!: number;
  height!: number;
  sha256!: string;
  rendition!: RenditionRecord | null;
  created_at!: Date;

  static override get jsonAttributes() {
    return ['rendition'];
  }

  override $parseDatabaseJson(json: Record<string, unknown>) {
    const parsed = super.$parseDatabaseJson(json);
    // bigint arrives as text from pg.
    if (parsed.size_bytes !== undefined) parsed.size_bytes = Number(parsed.size_bytes);
    return parsed;
  }

  get attachment(): Attachment {
    return { id: this.id, filename: this.filename, content_type: this.content_type, size_bytes: this.size_bytes, width: this.width, height: this.height };
  }
}
