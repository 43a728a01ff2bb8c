import * as v from 'valibot';
import { count, described, instant, uuid } from '../shared/record-schemas.js';
import type { Attachment } from '../shared/attachments.js';
import type { StoredFile } from '../db/file-models.js';

const imageType = v.picklist(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);
const fileFacts = {
  id: uuid,
  filename: v.string(),
  content_type: described(imageType, 'Read from the bytes, not from the upload'),
  size_bytes: count,
  width: described(count, 'Pixels, as the image is shown (EXIF orientation applied)'),
  height: count,
};

/** DESIGN §15: an uploaded image. */
export const FileRecordSchema = v.strictObject({ ...fileFacts, sha256: described(v.string(), 'Hex SHA-256 of the bytes'), created_at: instant });
export type FileRecord = v.InferOutput<typeof FileRecordSchema>;

/** A message's image as history shows it: the file's facts, or its name once the file is deleted. */
export const AttachmentRecordSchema = v.union([
  v.strictObject({ ...fileFacts, deleted: v.literal(false) }),
  described(v.strictObject({ id: uuid, filename: v.string(), deleted: v.literal(true) }), 'A file deleted since: its name stays in history'),
]);
export type AttachmentRecord = v.InferOutput<typeof AttachmentRecordSchema>;

export function presentAttachment(attachment: Attachment, exists: boolean): AttachmentRecord {
  return exists ? { ...attachment, deleted: false } : { id: attachment.id, filename: attachment.filename, deleted: true };
}

export function presentFile(file: StoredFile): FileRecord {
  const { id, filename, content_type, size_bytes, width, height } = file.attachment;
  return { id, filename, content_type, size_bytes, width, height, sha256: file.sha256, created_at: file.created_at.toISOString() };
}
