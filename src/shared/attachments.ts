import { IMAGE_TYPES, type ImageType } from './image-types.js';

/** Most images one message may carry (DESIGN §15). */
export const MAX_IMAGES_PER_MESSAGE = 10;

/** An image as a message keeps it: enough to describe it after the file is gone. */
export interface Attachment {
  id: string;
  filename: string;
  content_type: ImageType;
  size_bytes: number;
  width: number;
  height: number;
}

/** `cat.png (PNG, 640×480)`: how the local model names an image it was shown. */
export const describeImage = (a: Attachment) => `${a.filename} (${IMAGE_TYPES[a.content_type].name}, ${a.width}×${a.height})`;
