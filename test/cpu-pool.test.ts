import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, describe, expect, it } from 'vitest';
import { CpuPool } from '../src/cpu/pool.js';
import { inlineCpu, INLINE_JSON_MAX_CHARS } from '../src/cpu/work.js';
import { tokenizer } from '../src/shared/context-window.js';
import { MAX_JSON_VALUES } from '../src/cpu/json.js';
import { jsonBody } from '../src/http/body.js';
import { errorResponses } from '../src/http/middleware.js';
import { MAX_JSON_DEPTH } from '../src/http/validation.js';
import { RateLimitedError, ValidationError } from '../src/shared/errors.js';
import type { AppState } from '../src/http/context.js';

/** DESIGN §21: the web's CPU pool answers as the event loop would, only elsewhere. */
const pool = new CpuPool({ threads: 2, queue: 16 });
afterAll(() => pool.close());

const texts = [
  'short',
  'Hello, world! '.repeat(400),
  'word '.repeat(3000),
  'a'.repeat(5000),
  '日本語の文章は空白なしで続きます。'.repeat(300),
  '🙂👍🏽 emoji and <|endoftext|> spelt out '.repeat(200),
  Array.from({ length: 4000 }, (_, i) => `w${(i * 7919).toString(36)}`).join(' '),
];

describe('token counting on the pool', () => {
  it("finds the first text above the limit with the in-thread tokenizer's count, as inline counting does", async () => {
    const counter = await tokenizer();
    const counts = texts.map((text) => counter.count(text));
    for (const limit of [3, 10, 1024, 4000, 8192, 100_000]) {
      const index = counts.findIndex((tokens) => tokens > limit);
      const expected = index < 0 ? undefined : { index, tokens: counts[index] };
      expect(await pool.firstAbove(texts, limit), `limit ${limit}`).toEqual(expected);
      expect(await inlineCpu.firstAbove(texts, limit), `limit ${limit}`).toEqual(expected);
    }
    for (const [index, text] of texts.entries()) expect(await pool.firstAbove([text], counts[index]! - 1)).toEqual({ index: 0, tokens: counts[index] });
    expect(await pool.firstAbove([], 10)).toBeUndefined();
  });

  it('answers many concurrent callers each with their own text', async () => {
    const counter = await tokenizer();
    const counts = texts.map((text) => counter.count(text));
    // Each caller's text is the second of its list, just past its limit; the first (empty) always fits.
    const answers = await Promise.all(texts.map((text, i) => pool.firstAbove(['', text], counts[i]! - 1)));
    expect(answers).toEqual(counts.map((tokens) => ({ index: 1, tokens })));
  });

  it('counts a history of several megabytes in batches, naming the first text too large by its place in the whole', async () => {
    const counter = await tokenizer();
    const turn = 'word '.repeat(20_000);
    const fits = counter.count(turn);
    const history = [...Array.from({ length: 120 }, () => turn), `${turn} one more`];
    const expected = { index: 120, tokens: counter.count(history[120]!) };
    expect(await pool.firstAbove(history, fits)).toEqual(expected);
    expect(await inlineCpu.firstAbove(history, fits)).toEqual(expected);
  });

  it('refuses work beyond its queue with a 429 and Retry-After, and still serves the rest', async () => {
    const small = new CpuPool({ threads: 1, queue: 1 });
    try {
      const long = 'a b c d e f g '.repeat(20_000);
      const settled = await Promise.allSettled(Array.from({ length: 6 }, () => small.firstAbove([long], 10)));
      const refused = settled.filter((s) => s.status === 'rejected');
      expect(refused.length).toBeGreaterThan(0);
      for (const r of refused) {
        const err = (r as PromiseRejectedResult).reason;
        expect(err).toBeInstanceOf(RateLimitedError);
        expect(err.status).toBe(429);
        expect(err.headers).toEqual({ 'Retry-After': '1' });
      }
      const served = settled.filter((s) => s.status === 'fulfilled') as PromiseFulfilledResult<unknown>[];
      expect(served.length).toBeGreaterThan(0);
      for (const s of served) expect(s.value).toEqual({ index: 0, tokens: (await tokenizer()).count(long) });
    } finally {
      await small.close();
    }
  });
});

describe('JSON parsing on the pool', () => {
  const large = { model: 'agent:default', messages: Array.from({ length: 1200 }, (_, i) => ({ role: 'user', content: `message ${i} ${'é'.repeat(1000)}`, n: i, ok: i % 2 === 0, nothing: null })) };
  const largeText = JSON.stringify(large);

  it('parses a large body to what JSON.parse gives, and a small one inline', async () => {
    expect(largeText.length).toBeGreaterThan(INLINE_JSON_MAX_CHARS);
    expect(await pool.parseJson(largeText)).toEqual(JSON.parse(largeText));
    expect(await pool.parseJson('{"a":[1,2,{"b":"c"}]}')).toEqual({ a: [1, 2, { b: 'c' }] });
  });

  it('parses megabytes of text outside the Basic Multilingual Plane whole (no surrogate pair split between slices)', async () => {
    const emoji = { texts: Array.from({ length: 3000 }, (_, i) => `${i} ${'🙂é日'.repeat(200)}`) };
    const text = JSON.stringify(emoji);
    expect(text.length).toBeGreaterThan(2 * 1024 * 1024);
    expect(await pool.parseJson(text)).toEqual(emoji);
    const shifted = JSON.stringify({ p: 'x', ...emoji });
    expect(await pool.parseJson(shifted)).toEqual({ p: 'x', ...emoji });
  });

  it('refuses a large body of more than MAX_JSON_VALUES values (its copy back to the event loop is bounded), on the pool as inline', async () => {
    const many = JSON.stringify({ model: 'agent:default', values: Array.from({ length: MAX_JSON_VALUES + 1 }, (_, i) => `value ${i} ${'x'.repeat(40)}`) });
    expect(many.length).toBeGreaterThan(INLINE_JSON_MAX_CHARS);
    for (const parse of [(text: string) => pool.parseJson(text), inlineCpu.parseJson]) {
      const err = await parse(many).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid', ctx: { max_values: MAX_JSON_VALUES } });
    }
    const fewer = JSON.stringify({ values: Array.from({ length: MAX_JSON_VALUES - 10 }, (_, i) => `value ${i} ${'x'.repeat(60)}`) });
    expect(fewer.length).toBeGreaterThan(INLINE_JSON_MAX_CHARS);
    expect(await pool.parseJson(fewer)).toEqual(JSON.parse(fewer));
  });

  it("rejects malformed large text with JSON.parse's own error, and too deep text as json_invalid", async () => {
    const broken = `${largeText.slice(0, INLINE_JSON_MAX_CHARS + 1000)}}`;
    const inline = (() => {
      try {
        JSON.parse(broken);
      } catch (err) {
        return err as SyntaxError;
      }
    })()!;
    await expect(pool.parseJson(broken)).rejects.toThrow(new SyntaxError(inline.message));
    const deep = `${'['.repeat(MAX_JSON_DEPTH + 1)}${' '.repeat(INLINE_JSON_MAX_CHARS)}${']'.repeat(MAX_JSON_DEPTH + 1)}`;
    for (const cpu of [pool, inlineCpu]) {
      const err = await cpu.parseJson(deep).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid', ctx: { max_depth: MAX_JSON_DEPTH } });
    }
    await expect(inlineCpu.parseJson(broken)).rejects.toThrow(new SyntaxError(inline.message));
  });

  it('keeps the body reader’s 422 json_invalid shapes, with the position, over HTTP', async () => {
    const app = new Koa<AppState>();
    app.use(errorResponses());
    const readBody = jsonBody(() => 10 * 1024 * 1024, 10_000, { bytes: (bytes) => pool.parseJsonBytes(bytes) });
    app.use(async (ctx, next) => {
      await readBody(ctx);
      await next();
    });
    app.use((ctx) => {
      ctx.body = { echoed: ctx.state.body };
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const post = async (body: string) => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return { status: res.status, body: await res.json() };
    };
    try {
      const ok = await post(largeText);
      expect(ok.status).toBe(200);
      expect(ok.body.echoed).toEqual(large);
      // V8 names a position for some errors (then it is the loc), not for others (then 0), on the pool as inline.
      const unterminated = `${largeText.slice(0, INLINE_JSON_MAX_CHARS + 1000)}`;
      for (const text of [unterminated, `${largeText.slice(0, -1)},,]}`, '{"a": tru}']) {
        const expected = (() => {
          try {
            JSON.parse(text);
          } catch (err) {
            return (err as SyntaxError).message;
          }
        })()!;
        const bad = await post(text);
        expect(bad.status).toBe(422);
        const position = Number(/position (\d+)/.exec(expected)?.[1] ?? 0);
        expect(bad.body.detail[0]).toMatchObject({ type: 'json_invalid', msg: 'JSON decode error', loc: ['body', position], ctx: { error: expected } });
      }
      expect((await post(unterminated)).body.detail[0].loc[1]).toBeGreaterThan(0);
      for (const pad of [0, INLINE_JSON_MAX_CHARS]) {
        const deep = await post(`${'['.repeat(MAX_JSON_DEPTH + 1)}${' '.repeat(pad)}${']'.repeat(MAX_JSON_DEPTH + 1)}`);
        expect(deep.status).toBe(422);
        expect(deep.body.detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid', ctx: { max_depth: MAX_JSON_DEPTH } });
      }
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
