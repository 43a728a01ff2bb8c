import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestGateway } from './support/gateway.js';
import { cosine } from './support/fake-embeddings.js';
import { EmbeddingError, GatewayEmbedder, LocalEmbedder } from '../src/knowledge/embedders.js';
import { GatewayReranker, RerankError } from '../src/knowledge/reranker.js';

/** The knowledge clients of the gateway (DESIGN §14) against the test gateway on 127.0.0.1, under the §6 retry policy. */
let gateway: TestGateway;
const options = () => ({ url: gateway.url, apiKey: 'k', maxRetries: 3, retryBaseMs: 1, retryMaxDelayMs: 1000, timeoutMs: 5000 });
beforeAll(async () => {
  gateway = await TestGateway.start();
});
afterAll(() => gateway.close());

const REFUNDS = 'Our refund policy: refunds are issued within 14 days.';
const PASSWORD = 'To reset your password, click Forgot password.';
const requests = (model: string) => gateway.requestsFor(model).length;

describe('GatewayEmbedder', () => {
  it('embeds in batches, in input order, unit length; paraphrases are close', async () => {
    const embedder = new GatewayEmbedder('text-embedding-3-small', { ...options(), batchSize: 64 });
    const before = requests('text-embedding-3-small');
    const texts = Array.from({ length: 150 }, (_, i) => (i === 149 ? REFUNDS : `text number ${i}`));
    const vectors = await embedder.embed(texts);
    expect(requests('text-embedding-3-small') - before).toBe(3);
    expect(vectors).toHaveLength(150);
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 6);
    const [question, refunds, password] = await embedder.embed(['how do I get my money back', REFUNDS, PASSWORD]);
    expect(cosine(question!, refunds!)).toBeGreaterThan(0.7);
    expect(cosine(question!, password!)).toBeLessThan(0.2);
    expect(cosine(vectors[149]!, refunds!)).toBeCloseTo(1, 6);
    expect(await embedder.embed([])).toEqual([]);
  });

  it('asks the dimension once; honours `dimensions`', async () => {
    const embedder = new GatewayEmbedder('text-embedding-3-small', options(), 128);
    expect(await embedder.dimensions()).toBe(128);
    const before = requests('text-embedding-3-small');
    expect(await embedder.dimensions()).toBe(128);
    expect(requests('text-embedding-3-small')).toBe(before);
    expect(gateway.requestsFor('text-embedding-3-small').at(-1)!.body).toMatchObject({ dimensions: 128, encoding_format: 'float' });
  });

  it('retries 429 (Retry-After first) and 503, then succeeds', async () => {
    gateway.script('test-embed-64', { status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'slow down' } } }, { status: 503, body: { error: { message: 'busy' } } });
    const before = requests('test-embed-64');
    const [vector] = await new GatewayEmbedder('test-embed-64', options()).embed(['hello']);
    expect(vector).toHaveLength(64);
    expect(requests('test-embed-64') - before).toBe(3);
  });

  it('model_not_found is not retried; a Retry-After past the limit is not waited for; retries run out', async () => {
    const before = requests('nope');
    const missing = await new GatewayEmbedder('nope', options()).embed(['x']).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(EmbeddingError);
    expect(missing).toMatchObject({ code: 'model_not_found', retryable: false });
    expect(requests('nope') - before).toBe(1);
    gateway.script('test-embed-64', { status: 429, headers: { 'retry-after': '3600' }, body: { error: { message: 'later' } } });
    const started = Date.now();
    expect(await new GatewayEmbedder('test-embed-64', options()).embed(['x']).catch((e: unknown) => e)).toMatchObject({ code: 'gateway_rate_limited', retryable: true });
    expect(Date.now() - started).toBeLessThan(1000);
    const down = { status: 503, body: { error: { message: 'down' } } };
    gateway.script('test-embed-64', down, down, down, down);
    expect(await new GatewayEmbedder('test-embed-64', options()).embed(['x']).catch((e: unknown) => e)).toMatchObject({ code: 'gateway_unavailable', retryable: true });
  });

  it('a malformed answer is an error, not vectors', async () => {
    gateway.script('test-embed-64', { status: 200, body: { data: [{ index: 0, embedding: ['a'] }] } });
    expect(await new GatewayEmbedder('test-embed-64', options()).embed(['x']).catch((e: unknown) => e)).toMatchObject({ code: 'gateway_bad_response' });
    gateway.script('test-embed-64', { status: 200, body: { data: [] } });
    expect(await new GatewayEmbedder('test-embed-64', options()).embed(['x']).catch((e: unknown) => e)).toMatchObject({ code: 'gateway_bad_response' });
  });

  it('the fake refuses what a real gateway refuses: too many inputs, empty ones', async () => {
    const tooMany = await new GatewayEmbedder('test-embed-64', { ...options(), batchSize: 300 }).embed(Array(300).fill('x')).catch((e: unknown) => e);
    expect(tooMany).toMatchObject({ code: 'gateway_bad_request' });
    expect(await new GatewayEmbedder('test-embed-64', options()).embed(['']).catch((e: unknown) => e)).toMatchObject({ code: 'gateway_bad_request' });
    const tooLong = await new GatewayEmbedder('test-embed-64', options()).embed(['x'.repeat(32_001)]).catch((e: unknown) => e);
    expect(tooLong).toMatchObject({ code: 'gateway_bad_request', retryable: false, message: expect.stringContaining('32000') });
    expect(await new GatewayEmbedder('text-embedding-3-small', options(), 4000).embed(['x']).catch((e: unknown) => e)).toMatchObject({ code: 'gateway_bad_request' });
  });

  it('the fake answers a single string input in the OpenAI shape', async () => {
    const res = await fetch(`${gateway.url}/v1/embeddings`, { method: 'POST', body: JSON.stringify({ model: 'text-embedding-3-small', input: 'refund' }) });
    const body = (await res.json()) as { object: string; data: { object: string; index: number; embedding: number[] }[]; usage: { total_tokens: number } };
    expect(body).toMatchObject({ object: 'list', model: 'text-embedding-3-small', data: [{ object: 'embedding', index: 0 }], usage: { prompt_tokens: 1, total_tokens: 1 } });
    expect(body.data[0]!.embedding).toHaveLength(384);
  });

  it('puts vectors back in input order by `index`, and normalises them', async () => {
    gateway.script('test-embed-64', { status: 200, body: { data: [{ index: 1, embedding: [0, 2] }, { index: 0, embedding: [3, 4] }] } });
    expect(await new GatewayEmbedder('test-embed-64', options()).embed(['a', 'b'])).toEqual([[0.6, 0.8], [0, 1]]);
  });

  it('honours Retry-After (retry-after-ms) over its own backoff', async () => {
    gateway.script('test-embed-64', { status: 429, headers: { 'retry-after-ms': '150' }, body: { error: { message: 'slow down' } } });
    const before = requests('test-embed-64');
    await new GatewayEmbedder('test-embed-64', options()).embed(['x']);
    const [first, second] = gateway.requestsFor('test-embed-64').slice(before);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(140);
  });

  it('a gateway that goes silent, or answers with something other than JSON, is retried', async () => {
    gateway.script('test-embed-64', { hang: true }, { status: 200 });
    const before = requests('test-embed-64');
    const [vector] = await new GatewayEmbedder('test-embed-64', { ...options(), timeoutMs: 200 }).embed(['x']);
    expect(vector).toHaveLength(64);
    expect(requests('test-embed-64') - before).toBe(3);
    const unreachable = { ...options(), url: 'http://127.0.0.1:1', maxRetries: 1 };
    expect(await new GatewayEmbedder('test-embed-64', unreachable).embed(['x']).catch((e: unknown) => e)).toMatchObject({ code: 'gateway_unreachable', retryable: true });
  });

  it('refuses vectors of different lengths or with non-numbers, and names the model', async () => {
    gateway.script('test-embed-64', { status: 200, body: { data: [{ index: 0, embedding: [1, 2] }, { index: 1, embedding: [1] }] } });
    const uneven = await new GatewayEmbedder('test-embed-64', options()).embed(['a', 'b']).catch((e: unknown) => e);
    expect(uneven).toBeInstanceOf(EmbeddingError);
    expect(uneven).toMatchObject({ code: 'gateway_bad_response', retryable: false, message: expect.stringContaining('"test-embed-64"') });
    gateway.script('test-embed-64', { status: 200, body: { data: [{ index: 0, embedding: [1, null] }] } });
    expect(await new GatewayEmbedder('test-embed-64', options()).embed(['a']).catch((e: unknown) => e)).toMatchObject({ code: 'gateway_bad_response' });
    gateway.script('test-embed-64', { status: 200, body: { data: [{ index: 0, embedding: [1] }, { index: 0, embedding: [1] }] } });
    expect(await new GatewayEmbedder('test-embed-64', options()).embed(['a', 'b']).catch((e: unknown) => e)).toMatchObject({ code: 'gateway_bad_response' });
  });

  it('a failed dimension probe is not cached; a fetch passed in is used', async () => {
    const seen: string[] = [];
    const fetcher: typeof fetch = (input, init) => (seen.push(String(input)), fetch(input, init));
    const embedder = new GatewayEmbedder('test-embed-64', { ...options(), maxRetries: 0, fetch: fetcher });
    gateway.script('test-embed-64', { status: 503, body: { error: { message: 'down' } } });
    expect(await embedder.dimensions().catch((e: unknown) => e)).toMatchObject({ code: 'gateway_unavailable', retryable: true });
    expect(await embedder.dimensions()).toBe(64);
    expect(seen).toEqual([`${gateway.url}/v1/embeddings`, `${gateway.url}/v1/embeddings`]);
  });

  it('the local embedder is offline and lexical', async () => {
    const local = new LocalEmbedder();
    const [question, refunds, password] = await local.embed(['how do I get my money back', REFUNDS, PASSWORD]);
    expect(question).toHaveLength(96);
    expect(cosine(question!, refunds!)).toBeLessThan(0.3);
    expect(cosine(question!, password!)).toBeLessThan(0.3);
  });
});

describe('GatewayReranker', () => {
  it('orders documents by relevance, top_n of them; errors are EmbeddingErrors', async () => {
    const reranker = new GatewayReranker('test-rerank', options());
    const results = await reranker.rerank('money back', [PASSWORD, 'Shipping takes three days.', REFUNDS], 2);
    expect(results.map((r) => r.index)).toEqual([2, expect.any(Number)]);
    expect(results).toHaveLength(2);
    expect(results[0]!.relevance_score).toBeGreaterThan(results[1]!.relevance_score);
    expect(await new GatewayReranker('no-reranker', options()).rerank('q', ['d'], 1).catch((e: unknown) => e)).toMatchObject({ code: 'model_not_found' });
    gateway.script('test-rerank', { status: 200, body: { results: [{ index: 7, relevance_score: 1 }] } });
    expect(await reranker.rerank('q', ['d'], 1).catch((e: unknown) => e)).toMatchObject({ code: 'gateway_bad_response' });
    gateway.script('test-rerank', { status: 200, body: { results: [{ index: 0, relevance_score: 1 }, { index: 0, relevance_score: 0.5 }] } });
    expect(await reranker.rerank('q', ['d', 'e'], 2).catch((e: unknown) => e)).toMatchObject({ code: 'gateway_bad_response' });
    expect(await reranker.rerank('q', [], 3)).toEqual([]);
  });

  it('on the query path its retries are bounded by the options passed: failures a caller falls back on', async () => {
    const reranker = new GatewayReranker('test-rerank', { ...options(), maxRetries: 1, timeoutMs: 200 });
    const down = { status: 503, body: { error: { message: 'down' } } };
    gateway.script('test-rerank', down, down);
    const before = requests('test-rerank');
    const unavailable = await reranker.rerank('q', ['d'], 1).catch((e: unknown) => e);
    expect(unavailable).toBeInstanceOf(RerankError);
    expect(unavailable).toMatchObject({ code: 'gateway_unavailable', retryable: true });
    expect(requests('test-rerank') - before).toBe(2);
    gateway.script('test-rerank', { hang: true }, { hang: true });
    expect(await reranker.rerank('q', ['d'], 1).catch((e: unknown) => e)).toMatchObject({ code: 'gateway_timeout', retryable: true });
    gateway.script('test-rerank', { status: 429, headers: { 'retry-after': '60' }, body: { error: { message: 'later' } } });
    const started = Date.now();
    expect(await reranker.rerank('q', ['d'], 1).catch((e: unknown) => e)).toMatchObject({ code: 'gateway_rate_limited' });
    expect(Date.now() - started).toBeLessThan(1000);
    gateway.script('test-rerank', { status: 503, body: { error: { message: 'blip' } } });
    expect(await reranker.rerank('refund', ['password', 'refund'], 1)).toEqual([{ index: 1, relevance_score: expect.any(Number) }]);
  });
});
