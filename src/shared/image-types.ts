/** The image types a file may be (DESIGN §15), with the name people know them by and their usual extension. */
export const IMAGE_TYPES = {
  'image/png': { name: 'PNG', extension: 'png' },
  'image/jpeg': { name: 'JPEG', extension: 'jpg' },
  'image/webp': { name: 'WebP', extension: 'webp' },
  'image/gif': { name: 'GIF', extension: 'gif' },
} as const;
export type ImageType = keyof typeof IMAGE_TYPES;
