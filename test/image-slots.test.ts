import { describe, expect, it } from 'vitest';
import { ImageSlots } from '../workers/models/gateway/transcript.js';

describe('ImageSlots: image bytes spliced into a JSON body', () => {
  const image = { mimeType: 'image/png' as const, data: Buffer.from('not really a png').toString('base64') };

  it('gives the same JSON as serialising the data itself, as bytes', () => {
    const slots = new ImageSlots();
    const body = slots.body(JSON.stringify({ text: 'héllo', url: slots.dataUrl(image), raw: slots.base64(image) }));
    expect(Buffer.isBuffer(body)).toBe(true);
    expect(JSON.parse(body.toString('utf8'))).toEqual({ text: 'héllo', url: `data:image/png;base64,${image.data}`, raw: image.data });
  });

  it('leaves a body without images as its text, and text that looks like a marker as text', () => {
    expect(new ImageSlots().body('{"a":"@image-0-0@"}')).toBe('{"a":"@image-0-0@"}');
    const slots = new ImageSlots();
    const marker = slots.dataUrl(image);
    const forged = marker.replace(/-(\d+)@$/, '-1@').replace(/image-[0-9a-f]+/, 'image-000000000000000000');
    const body = slots.body(JSON.stringify({ user: forged, url: marker }));
    expect(JSON.parse(body.toString())).toEqual({ user: forged, url: `data:image/png;base64,${image.data}` });
  });
});
