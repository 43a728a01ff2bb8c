import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { CpuPool } from '../src/cpu/pool.js';
import { inlineCpu, type CpuWork, type ItemsSent } from '../src/cpu/work.js';
import { MAX_JSON_DEPTH } from '../src/shared/json-text.js';

/**
 * Dataset item uploads under hostile and everyday input (DESIGN §21, §24): parsed in the web's CPU
 * pool, bounded in depth, items and bytes (422 / 413 naming the bound), all or nothing.
 */
const MAX_ITEMS = 10_000;
const UPLOAD_MAX_BYTES = 10 * 1024 * 1024;

const pool = new CpuPool({ threads: 1, queue: 8 });
/** The formats the pool was handed: parsing an upload is its work, not the event loop's. */
const pooled: ItemsSent['format'][] = [];
const recordingPool: CpuWork = {
  firstAbove: (texts, limit) => pool.firstAbove(texts, limit),
  parseJson: (text) => pool.parseJson(text),
  readItems: (upload) => {
    pooled.push(upload.format);
    return pool.readItems(upload);
  },
};

let app: TestApp;
let inlineApp: TestApp;
beforeAll(async () => {
  const env = { DATASET_MAX_ITEMS: String(MAX_ITEMS), DATASET_UPLOAD_MAX_BYTES: String(UPLOAD_MAX_BYTES) };
  [app, inlineApp] = await Promise.all([startTestApp({ env, cpu: recordingPool }), startTestApp({ env, cpu: inlineCpu })]);
});
afterAll(async () => {
  await Promise.all([app?.close(), inlineApp?.close()]);
  await pool.close();
});

async function newDataset(on: TestApp = app) {
  const { token } = await on.signedInUser();
  const dataset = (await on.request('POST', '/api/datasets', { token, body: { name: 'uploads' } })).body;
  const path = `/api/datasets/${dataset.id}/items`;
  const send = (body: BodyInit, type?: string) => fetch(`${on.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...(type ? { 'content-type': type } : {}) }, body }).then(answer);
  const upload = (text: string, filename: string) => {
    const form = new FormData();
    form.append('file', new Blob([text]), filename);
    return send(form);
  };
  const count = async () => (await on.request('GET', `/api/datasets/${dataset.id}`, { token })).body.item_count as number;
  const items = async () => (await on.request('GET', `${path}?size=100`, { token })).body.items as { input: { q: string }; expected: unknown; metadata: unknown }[];
  return { token, dataset, path, send, upload, count, items };
}

async function answer(res: Response) {
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
}

const item = (i: number, pad = 0) => JSON.stringify({ input: { q: `question ${i} ${'x'.repeat(pad)}` } });
/** 300,000 levels: far past MAX_JSON_DEPTH, and past any recursive walk's stack. */
const deep = '['.repeat(300_000) + ']'.repeat(300_000);
/** Lines enough to take an upload past 1 MiB (where a body is parsed off the event loop). */
const padding = Array.from({ length: 40 }, (_, i) => item(i, 30_000));

describe('deeply nested JSON in an upload over 1 MiB', () => {
  for (const [where, target] of [['the pool', () => app], ['inline', () => inlineApp]] as const) {
    it(`answers 422 naming MAX_JSON_DEPTH and the line or item, nothing stored (${where})`, async () => {
      const { send, upload, count } = await newDataset(target());
      const jsonl = [item(0), deep, ...padding].join('\n');
      expect(jsonl.length).toBeGreaterThan(1024 * 1024);
      for (const res of [await send(jsonl, 'application/x-ndjson'), await upload(jsonl, 'items.jsonl')]) {
        expect(res.status, res.text.slice(0, 200)).toBe(422);
        expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'line 2'], type: 'json_invalid', ctx: { max_depth: MAX_JSON_DEPTH } });
        expect(res.body.detail[0].msg).toContain('MAX_JSON_DEPTH');
      }
      const json = `[${[item(0), ...padding, deep].join(',')}]`;
      for (const res of [await upload(json, 'items.json'), await send(json, 'application/json')]) {
        expect(res.status, res.text.slice(0, 200)).toBe(422);
        expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'items', 41], type: 'json_invalid' });
        expect(res.body.detail[0].msg).toContain('MAX_JSON_DEPTH');
      }
      expect(await count()).toBe(0);
    });
  }
});

describe('uploads are parsed in the CPU pool', () => {
  it('CSV, JSONL and JSON, small ones too, and a 10 MB CSV of 10,000 items lands whole and in order', async () => {
    const { send, upload, count, items } = await newDataset();
    pooled.length = 0;
    expect((await send('q,expected\nwhat?,1', 'text/csv')).status).toBe(201);
    expect((await send(item(1), 'application/x-ndjson')).status).toBe(201);
    expect((await send(`[${item(2)}]`, 'application/json')).status).toBe(201);
    expect(pooled).toEqual(['csv', 'jsonl', 'json']);
    const big = await newDataset();
    const csv = 'q,expected,topic\n' + Array.from({ length: MAX_ITEMS }, (_, i) => `question ${i} ${'y'.repeat(1000)},${i},t${i % 7}`).join('\n');
    expect(csv.length).toBeGreaterThan(10_000_000);
    const res = await big.upload(csv, 'big.csv');
    expect(res.status, res.text.slice(0, 200)).toBe(201);
    expect(res.body).toMatchObject({ added: MAX_ITEMS, item_count: MAX_ITEMS });
    expect(res.body.items).toHaveLength(100);
    expect(res.body.items[99]).toMatchObject({ input: { q: expect.stringMatching(/^question 99 y/) }, expected: '99', metadata: { topic: 't1' } });
    expect(pooled.at(-1)).toBe('csv');
    expect(await big.count()).toBe(MAX_ITEMS);
    expect((await big.items())[0]!.input.q).toMatch(/^question 0 /);
    expect(await count()).toBe(3);
    expect((await items()).map((it) => it.input.q.trim())).toEqual(['what?', 'question 1', 'question 2']);
  });
});

describe('a JSON items body over 1 MiB', () => {
  it(`takes ${MAX_ITEMS} items (the item limit, not the general bound on a large body's values)`, async () => {
    const { send, count } = await newDataset();
    const body = `[${Array.from({ length: MAX_ITEMS }, (_, i) => JSON.stringify({ input: { q: `question ${i}: ${'z'.repeat(40)}` }, expected: String(i), metadata: { n: i, tags: ['a', 'b'] } })).join(',')}]`;
    expect(body.length).toBeGreaterThan(1024 * 1024);
    const res = await send(body, 'application/json');
    expect(res.status, res.text.slice(0, 200)).toBe(201);
    expect(res.body.added).toBe(MAX_ITEMS);
    expect(await count()).toBe(MAX_ITEMS);
  });

  it('one more than the limit in one upload is 422 naming DATASET_MAX_ITEMS, as JSON, JSONL and CSV; nothing stored', async () => {
    const { send, upload, count } = await newDataset();
    const lines = Array.from({ length: MAX_ITEMS + 1 }, (_, i) => item(i));
    for (const res of [
      await send(`[${lines.join(',')}]`, 'application/json'),
      await send(lines.join('\n'), 'application/x-ndjson'),
      await upload('q\n' + Array.from({ length: MAX_ITEMS + 1 }, (_, i) => `q${i}`).join('\n'), 'many.csv'),
    ]) {
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ type: 'too_long', ctx: { max_items: MAX_ITEMS } });
      expect(res.body.detail[0].msg).toContain('DATASET_MAX_ITEMS');
    }
    expect(await count()).toBe(0);
  });
});

describe('metadata', () => {
  it('must be a JSON object: a list is 422 on items (create and PATCH) and on datasets', async () => {
    const { token, dataset, path, send, count, items } = await newDataset();
    const listed = await send(JSON.stringify([{ input: { q: 'a' }, metadata: ['x', 'y'] }]), 'application/json');
    expect(listed.status).toBe(422);
    expect(listed.body.detail[0]).toMatchObject({ loc: ['body', 'items', 0, 'metadata'] });
    expect(listed.body.detail[0].msg).toContain('metadata must be a JSON object');
    expect((await send(JSON.stringify({ input: { q: 'a' }, metadata: [1] }), 'application/x-ndjson')).status).toBe(422);
    expect(await count()).toBe(0);
    expect((await send(JSON.stringify([{ input: { q: 'a' }, metadata: { source: 'web' } }]), 'application/json')).status).toBe(201);
    const [stored] = await items();
    expect(stored!.metadata).toEqual({ source: 'web' });
    const itemId = (stored as unknown as { id: string }).id;
    const patched = await app.request('PATCH', `${path}/${itemId}`, { token, body: { metadata: ['0'] } });
    expect(patched.status).toBe(422);
    expect(patched.text).toContain('metadata must be a JSON object');
    expect((await items())[0]!.metadata).toEqual({ source: 'web' });
    expect((await app.request('POST', '/api/datasets', { token, body: { name: 'm', metadata: ['a'] } })).status).toBe(422);
    expect((await app.request('PATCH', `/api/datasets/${dataset.id}`, { token, body: { metadata: ['a'] } })).status).toBe(422);
  });
});

describe('what users send', () => {
  it('a BOM and CRLF lines are read as text editors and spreadsheets write them', async () => {
    const { send, upload, items } = await newDataset();
    expect((await upload('\uFEFFq,expected\r\nfirst?,1\r\nsecond?,2\r\n', 'excel.csv')).body).toMatchObject({ added: 2 });
    expect((await send(`\uFEFF${item(3)}\r\n${item(4)}\r\n\r\n`, 'application/x-ndjson')).body).toMatchObject({ added: 2 });
    expect((await upload(`\uFEFF[${item(5)}]`, 'bom.json')).body).toMatchObject({ added: 1 });
    expect((await items()).map((it) => it.input.q.trim())).toEqual(['first?', 'second?', 'question 3', 'question 4', 'question 5']);
  });

  it('CSV columns other than q, expected and image_ids become metadata', async () => {
    const { send, items } = await newDataset();
    expect((await send('q,expected,difficulty,source\nwhat?,4,easy,book', 'text/csv')).status).toBe(201);
    expect((await items())[0]).toMatchObject({ input: { q: 'what?' }, expected: '4', metadata: { difficulty: 'easy', source: 'book' } });
  });

  it('refusals name what is wrong, and store nothing', async () => {
    const { send, upload, count } = await newDataset();
    const cases: [Promise<{ status: number; text: string }>, number, string][] = [
      [upload('', 'empty.csv'), 422, 'no items were sent'],
      [upload('', 'empty.jsonl'), 422, 'no items were sent'],
      [upload('q,expected\n', 'header-only.csv'), 422, 'no items were sent'],
      [upload('what is 2+2?,4\nwhat is 3+3?,6', 'no-header.csv'), 422, '`q` column'],
      [send(`${item(1)}\n${item(2)}\n{"input": {"q": "x"}\n${item(4)}`, 'application/x-ndjson'), 422, '"loc":["body","line 3"]'],
      [upload(`${item(1)}\nnot json at all`, 'bad.jsonl'), 422, 'line 2 is not JSON'],
      [upload('[{"input":{"q":"x"}},', 'cut.json'), 422, 'JSON decode error'],
      [send(`${item(1)}\n{"input":{"q":"\\u0000"}}`, 'application/x-ndjson'), 422, 'NUL'],
      [upload('x'.repeat(UPLOAD_MAX_BYTES + 1), 'huge.csv'), 413, `${UPLOAD_MAX_BYTES}`],
      [send('q\n' + 'x'.repeat(UPLOAD_MAX_BYTES + 1), 'text/csv'), 413, `${UPLOAD_MAX_BYTES}`],
    ];
    for (const [pending, status, text] of cases) {
      const res = await pending;
      expect(res.status, res.text.slice(0, 300)).toBe(status);
      expect(res.text).toContain(text);
    }
    expect(await count()).toBe(0);
  });
});
