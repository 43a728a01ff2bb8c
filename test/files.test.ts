import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { animatedGif, gif, jpeg, png, pngBomb, sizeOf, truncated, webp } from './support/images.js';
import { ModelImages } from '../src/files/model-images.js';
import { PostgresFileStorage } from '../src/files/storage.js';
import { ImageProcessor } from '../src/files/images.js';

/**
 * DESIGN §15 through the API: images only (the type read from the bytes), sizes and quota,
 * owner-only reads, and every hostile upload refused with nothing stored.
 */
const MAX_SIDE = 256;
const QUOTA = 400_000;
let app: TestApp;
let token: string;
let userId: string;

beforeAll(async () => {
  // Six uploads of one user race for the quota below: they all need a slot (UPLOADS_PER_USER is tested in test/shared-use.test.ts).
  app = await startTestApp({ env: { IMAGE_MAX_SIDE: String(MAX_SIDE), FILE_MAX_BYTES: '300000', FILE_QUOTA_BYTES: String(QUOTA), UPLOADS_PER_USER: '8' } });
  const user = await app.signedInUser();
  token = user.token;
  userId = user.user.id;
});
afterAll(async () => {
  await app?.close();
});

interface Part {
  name?: string;
  filename?: string;
  type?: string;
  bytes: Buffer;
}

async function send(parts: Part[], as = token, headers: Record<string, string> = {}) {
  const form = new FormData();
  for (const part of parts) form.append(part.name ?? 'file', new Blob([part.bytes], { type: part.type ?? 'application/octet-stream' }), part.filename ?? 'image.png');
  const res = await fetch(`${app.url}/api/files`, { method: 'POST', headers: { authorization: `Bearer ${as}`, ...headers }, body: form });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}
async function post(body: BodyInit, headers: Record<string, string> = {}) {
  const res = await fetch(`${app.url}/api/files`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body });
  return { status: res.status, body: await res.json() };
}
const upload = (bytes: Buffer, filename = 'image.png', as = token, type = 'image/png') => send([{ bytes, filename, type }], as);

const storedFor = async (user: string) => ({
  files: Number((await app.services.knex('files').where({ user_id: user }).count({ n: '*' }))[0]!.n),
  blobs: Number((await app.services.knex('file_blobs').join('files', 'files.id', 'file_blobs.file_id').where({ user_id: user }).count({ n: '*' }))[0]!.n),
  usage: Number((await app.services.knex('file_usage').where({ user_id: user }).first())?.bytes ?? 0),
});

describe('files', () => {
  it('stores PNG, JPEG, WebP and GIF with the type read from the bytes, their size and a hash', async () => {
    const cases = [
      { bytes: await png(40, 30), type: 'image/png' },
      { bytes: await jpeg(64, 48), type: 'image/jpeg' },
      { bytes: await webp(20, 10), type: 'image/webp' },
      { bytes: await gif(12, 8), type: 'image/gif' },
    ];
    for (const { bytes, type } of cases) {
      // The client's name and Content-Type say PNG every time: the bytes decide.
      const res = await upload(bytes, 'holiday.png', token, 'image/png');
      expect(res.status).toBe(201);
      const { width, height } = await sizeOf(bytes);
      expect(res.body).toEqual({
        id: expect.any(String),
        filename: 'holiday.png',
        content_type: type,
        size_bytes: bytes.length,
        width,
        height,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        created_at: expect.any(String),
      });
      const content = await fetch(`${app.url}/api/files/${res.body.id}/content`, { headers: { authorization: `Bearer ${token}` } });
      expect(content.status).toBe(200);
      expect(content.headers.get('content-type')).toBe(type);
      expect(content.headers.get('content-disposition')).toBe('attachment; filename="holiday.png"');
      expect(content.headers.get('x-content-type-options')).toBe('nosniff');
      expect(Buffer.from(await content.arrayBuffer()).equals(bytes)).toBe(true);
    }
  });

  it('lists newest first in pages, reads one, deletes it (204, then 404) and gives its bytes back to the quota', async () => {
    const { token: own, user } = await app.signedInUser();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await upload(await png(10 + i, 10), `p${i}.png`, own)).body.id);
    const first = await app.request('GET', '/api/files?page=1&size=2', { token: own });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 3, page: 1, size: 2, pages: 2 });
    expect(first.body.items.map((f: { id: string }) => f.id)).toEqual([ids[2], ids[1]]);
    expect((await app.request('GET', '/api/files?page=2&size=2', { token: own })).body.items.map((f: { id: string }) => f.id)).toEqual([ids[0]]);
    const one = await app.request('GET', `/api/files/${ids[1]}`, { token: own });
    expect(one.body).toMatchObject({ id: ids[1], filename: 'p1.png', width: 11, height: 10 });
    const before = await storedFor(user.id);
    const removed = await app.request('DELETE', `/api/files/${ids[1]}`, { token: own });
    expect(removed.status).toBe(204);
    expect((await app.request('GET', `/api/files/${ids[1]}`, { token: own })).status).toBe(404);
    expect((await app.request('GET', `/api/files/${ids[1]}/content`, { token: own })).status).toBe(404);
    expect((await app.request('DELETE', `/api/files/${ids[1]}`, { token: own })).status).toBe(404);
    const after = await storedFor(user.id);
    expect(after).toEqual({ files: before.files - 1, blobs: before.blobs - 1, usage: before.usage - one.body.size_bytes });
  });

  it("another user's file is 404 on every route; scope chat may use files and other scopes may not", async () => {
    const { body } = await upload(await png(8, 8));
    const other = await app.signedInUser();
    for (const [method, path] of [['GET', `/api/files/${body.id}`], ['GET', `/api/files/${body.id}/content`], ['DELETE', `/api/files/${body.id}`]] as const) {
      const res = await app.request(method, path, { token: other.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: 'File not found' });
    }
    expect((await app.request('GET', '/api/files', { token: other.token })).body.total).toBe(0);
    expect((await app.request('GET', `/api/files/${body.id}`, { token })).status).toBe(200);
    const chatKey = (await app.request('POST', '/api/me/api-keys', { token, body: { name: 'chat', scopes: 'chat' } })).body.key;
    const kbKey = (await app.request('POST', '/api/me/api-keys', { token, body: { name: 'kb', scopes: 'kb' } })).body.key;
    expect((await upload(await png(9, 9), 'k.png', chatKey)).status).toBe(201);
    expect((await app.request('GET', `/api/files/${body.id}`, { token: chatKey })).status).toBe(200);
    expect((await upload(await png(9, 9), 'k.png', kbKey)).status).toBe(403);
    expect((await app.request('GET', '/api/files', { token: kbKey })).status).toBe(403);
    expect((await app.request('GET', '/api/files')).status).toBe(401);
  });

  it('keeps a model copy of images larger than IMAGE_MAX_SIDE, of animated GIFs (first frame) and of EXIF-rotated JPEGs', async () => {
    const large = await upload(await png(600, 300), 'wide.png');
    expect(large.body).toMatchObject({ width: 600, height: 300, content_type: 'image/png' });
    const small = await upload(await png(100, 50), 'small.png');
    const animated = await upload(await animatedGif(40, 30), 'anim.gif');
    expect(animated.body).toMatchObject({ content_type: 'image/gif', width: 40, height: 30 });
    // Orientation 6: stored 80×40, shown 40×80.
    const rotated = await upload(await jpeg(80, 40, 6), 'phone.jpg');
    expect(rotated.body).toMatchObject({ content_type: 'image/jpeg', width: 40, height: 80 });
    const rendition = async (id: string) => {
      const file = await app.services.knex('files').where({ id }).first();
      const model = await app.services.knex('file_blobs').where({ file_id: id, variant: 'model' }).first();
      return { rendition: file.rendition, model: model ? await sizeOf(Buffer.from(model.base64, 'base64')) : null };
    };
    expect(await rendition(large.body.id)).toEqual({
      rendition: { max_side: MAX_SIDE, content_type: 'image/png', width: 256, height: 128, size_bytes: expect.any(Number) },
      model: { format: 'png', width: 256, height: 128 },
    });
    expect(await rendition(small.body.id)).toEqual({ rendition: null, model: null });
    expect(await rendition(animated.body.id)).toMatchObject({ rendition: { content_type: 'image/png', width: 40, height: 30 }, model: { format: 'png' } });
    expect(await rendition(rotated.body.id)).toMatchObject({ rendition: { content_type: 'image/jpeg', width: 40, height: 80 }, model: { format: 'jpeg', width: 40, height: 80 } });
  });

  it('names the file safely: no directories or control characters, at most 255 characters, a name when none is sent', async () => {
    expect((await upload(await png(5, 5), '../../etc/passwd.png')).body.filename).toBe('passwd.png');
    // A raw control character in the part's header is refused by the parser; an encoded one is removed.
    expect((await upload(await png(5, 5), 'bell\u0007.png')).status).toBe(422);
    const image = await png(5, 5);
    const body = Buffer.concat([
      Buffer.from(`--b\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''bad%07name%0A.png\r\nContent-Type: image/png\r\n\r\n`),
      image,
      Buffer.from('\r\n--b--\r\n'),
    ]);
    const encoded = await post(body, { 'content-type': 'multipart/form-data; boundary=b' });
    expect(encoded).toMatchObject({ status: 201, body: { filename: 'badname.png' } });
    expect((await upload(await png(5, 5), 'C:\\Users\\me\\cat.png')).body.filename).toBe('cat.png');
    expect((await upload(await png(5, 5), `${'a'.repeat(400)}.png`)).body.filename).toHaveLength(255);
    const unnamed = await send([{ bytes: await jpeg(5, 5), filename: ' ' }]);
    expect(unnamed.body.filename).toBe('image.jpg');
    const accented = await upload(await png(5, 5), 'café menu.png');
    expect(accented.body.filename).toBe('café menu.png');
    const content = await fetch(`${app.url}/api/files/${accented.body.id}/content`, { headers: { authorization: `Bearer ${token}` } });
    expect(content.headers.get('content-disposition')).toBe(`attachment; filename="cafe menu.png"; filename*=UTF-8''caf%C3%A9%20menu.png`);
  });
});

describe('hostile uploads: a clear 4xx and nothing stored', () => {
  const refused = async (request: () => Promise<{ status: number; body: any }>, status: number, text: RegExp, user = userId) => {
    const before = await storedFor(user);
    const res = await request();
    expect(res.status).toBe(status);
    expect(JSON.stringify(res.body)).toMatch(text);
    expect(await storedFor(user)).toEqual(before);
    return res;
  };

  it('bytes that are not an image, whatever the name or Content-Type, are 415', async () => {
    const { token: own, user } = await app.signedInUser();
    const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF');
    await refused(() => upload(Buffer.from('hello, I am text pretending to be a PNG'), 'cat.png', own, 'image/png'), 415, /only PNG, JPEG, WebP and GIF/, user.id);
    await refused(() => upload(pdf, 'scan.jpg', own, 'image/jpeg'), 415, /application\/pdf content/, user.id);
    await refused(() => upload(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), 'x.svg', own, 'image/svg+xml'), 415, /unsupported_media_type/, user.id);
    await refused(() => upload(Buffer.alloc(0), 'empty.png', own), 415, /unsupported_media_type/, user.id);
    expect(await storedFor(user.id)).toEqual({ files: 0, blobs: 0, usage: 0 });
  });

  it('a decompression bomb (a small PNG declaring 50,000 × 50,000 pixels) is refused from its header', async () => {
    const bomb = pngBomb();
    expect(bomb.length).toBeLessThan(100_000);
    await refused(() => upload(bomb, 'bomb.png'), 422, /declares 50000×50000 pixels.*IMAGE_MAX_PIXELS/);
    const res = await upload(bomb, 'bomb.png');
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'file'], type: 'image_too_large' });
  });

  it('truncated images of each type are 422 image_unreadable', async () => {
    for (const image of [await png(300, 200), await jpeg(300, 200), await webp(300, 200), await gif(300, 200)]) {
      const res = await refused(() => upload(truncated(image), 'cut.png'), 422, /damaged or truncated|could not be read/);
      expect(res.body.detail[0].type).toBe('image_unreadable');
    }
  });

  it('a multipart body with no file part, with the file under another name, or with two files is 422', async () => {
    const image = await png(5, 5);
    const fieldOnly = new FormData();
    fieldOnly.append('note', 'hi');
    await refused(() => post(fieldOnly), 422, /Field required: a \\"file\\" part/);
    await refused(() => send([{ name: 'image', bytes: image }]), 422, /Field required: a \\"file\\" part/);
    await refused(() => send([{ bytes: image }, { bytes: image }]), 422, /exactly one file/);
  });

  it('a JSON or raw body is 415; an unparsable multipart body is 422', async () => {
    await refused(() => app.request('POST', '/api/files', { token, body: { file: 'aGVsbG8=' } }), 415, /multipart\/form-data/);
    const image = await png(4, 4);
    await refused(() => post(image, { 'content-type': 'image/png' }), 415, /multipart\/form-data/);
    await refused(() => post('garbage', { 'content-type': 'multipart/form-data' }), 422, /Boundary not found/);
    await refused(() => post('--x\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nabc', { 'content-type': 'multipart/form-data; boundary=x' }), 422, /multipart|file/i);
  });

  it('a file past FILE_MAX_BYTES is 413; uploads past FILE_QUOTA_BYTES are 413 naming the quota, at once or racing', async () => {
    const { token: own, user } = await app.signedInUser();
    const big = Buffer.concat([await png(10, 10), Buffer.alloc(310_000)]);
    await refused(() => upload(big, 'big.png', own), 413, /exceeds 300000 bytes/, user.id);
    // Each ~110 kB: three fit in 400,000 bytes, the fourth does not, however many race.
    const chunky = async (seed: number) => Buffer.concat([await png(10 + seed, 10), Buffer.alloc(110_000, seed)]);
    const raced = await Promise.all([0, 1, 2, 3, 4, 5].map(async (i) => upload(await chunky(i), `c${i}.png`, own)));
    const statuses = raced.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 413, 413, 413]);
    expect(raced.find((r) => r.status === 413)!.body.message).toMatch(/quota of 400000 bytes \(FILE_QUOTA_BYTES\)/);
    const stored = await storedFor(user.id);
    expect(stored.files).toBe(3);
    expect(stored.usage).toBe(raced.filter((r) => r.status === 201).reduce((sum, r) => sum + r.body.size_bytes, 0));
    expect(stored.usage).toBeLessThanOrEqual(QUOTA);
  });
});

describe('image_ids on runs: checked before anything is stored', () => {
  const runsOf = async (user: string) => ({
    runs: Number((await app.services.knex('runs').where({ user_id: user }).count({ n: '*' }))[0]!.n),
    conversations: Number((await app.services.knex('conversations').where({ user_id: user }).count({ n: '*' }))[0]!.n),
  });

  it('11 ids, a repeated id, ids that are not ids, another user\'s image and a deleted one → 422 naming each; no run, no conversation', async () => {
    const { token: own, user } = await app.signedInUser();
    const other = await app.signedInUser();
    const mine = (await upload(await png(6, 6), 'mine.png', own)).body.id;
    const theirs = (await upload(await png(6, 6), 'theirs.png', other.token)).body.id;
    const deleted = (await upload(await png(6, 6), 'old.png', own)).body.id;
    expect((await app.request('DELETE', `/api/files/${deleted}`, { token: own })).status).toBe(204);
    const eleven = Array.from({ length: 11 }, () => crypto.randomUUID()).join(',');
    const cases: [unknown, RegExp][] = [
      [eleven, /at most 10 images may be attached to a message; 11 were given/],
      [`${mine}, ${mine}`, new RegExp(`${mine} is given more than once`)],
      [`${mine} cat.png`, /cat\.png\W{0,2} is not a file id/],
      [theirs, new RegExp(`${theirs} is not one of your images`)],
      [`${mine},${deleted}`, new RegExp(`${deleted} is not one of your images`)],
    ];
    for (const [imageIds, message] of cases) {
      for (const [path, body] of [['/api/react', { q: 'look', image_ids: imageIds }], ['/api/dag', { q: 'look', image_ids: imageIds }], ['/api/runs', { mode: 'react', q: 'look', image_ids: imageIds }]] as const) {
        const res = await app.request('POST', path, { token: own, body });
        expect(res.status).toBe(422);
        expect(res.body.detail[0].loc).toEqual(['body', 'image_ids']);
        expect(JSON.stringify(res.body.detail)).toMatch(message);
      }
    }
    expect(await runsOf(user.id)).toEqual({ runs: 0, conversations: 0 });
    // The same ids, valid, start a run.
    const ok = await app.request('POST', '/api/runs', { token: own, body: { mode: 'react', q: 'look', image_ids: `${mine}` } });
    expect(ok.status).toBe(202);
    const message = await app.services.knex('messages').where({ run_id: ok.body.run_id, role: 'user' }).first();
    expect(message.attachments).toEqual([{ id: mine, filename: 'mine.png', content_type: 'image/png', size_bytes: expect.any(Number), width: 6, height: 6 }]);
  });
});

describe('model images', () => {
  it('a worker whose IMAGE_MAX_SIDE differs from the upload\'s downscales the original itself, once per run', async () => {
    const file = (await upload(await png(900, 300), 'banner.png')).body;
    const processor = new ImageProcessor({ maxSide: 90, maxPixels: 10_000_000, concurrency: 1 });
    const images = new ModelImages(app.services.models.File, new PostgresFileStorage(app.services.knex), processor).forRun(userId);
    const first = await images.inline(file);
    expect(first!.mimeType).toBe('image/png');
    expect(await sizeOf(Buffer.from(first!.data, 'base64'))).toEqual({ format: 'png', width: 90, height: 30 });
    expect(await images.inline(file)).toBe(first);
    // At the upload's own side the stored copy is sent; another user's run sees nothing.
    const atUploadSide = new ModelImages(app.services.models.File, new PostgresFileStorage(app.services.knex), new ImageProcessor({ maxSide: MAX_SIDE, maxPixels: 10_000_000, concurrency: 1 }));
    const stored = await app.services.knex('file_blobs').where({ file_id: file.id, variant: 'model' }).first();
    expect(await atUploadSide.forRun(userId).inline(file)).toEqual({ mimeType: 'image/png', data: stored.base64 });
    expect(await atUploadSide.forRun(crypto.randomUUID()).inline(file)).toBeUndefined();
  });
});
