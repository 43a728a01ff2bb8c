import { embed as embedLocally } from './embedding.js';
import { EmbeddingError, malformed, postWithRetries, type GatewayClientOptions } from './gateway-client.js';

export { EmbeddingError, GatewayClientError, type GatewayClientOptions } from './gateway-client.js';

/** Turns texts into unit-length vectors, in input order. */
export interface Embedder {
  readonly model: string;
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

const DEFAULT_BATCH = 64;

function normalise(vector: number[]): number[] {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  return norm > 0 ? vector.map((x) => x / norm) : vector;
}

const isVector = (value: unknown): value is number[] => Array.isArray(value) && value.length > 0 && value.every((x) => typeof x === 'number' && Number.isFinite(x));

/** The built-in lexical embedder (src/knowledge/embedding.ts): offline, no calls. */
export class LocalEmbedder implements Embedder {
  readonly model = 'local';
  async embed(texts: string[]): Promise<number[][]> {
    return texts.map(embedLocally);
  }
}

/** A gateway embedding model: `POST /v1/embeddings` in batches, under the gateway's retry policy. */
export class GatewayEmbedder implements Embedder {
  private probed?: Promise<number>;

  constructor(
    readonly model: string,
    private readonly options: GatewayClientOptions,
    private readonly requestedDimensions?: number,
  ) {}

  /** Unit vectors in input order; `[]` for no texts, without a request. Failures are EmbeddingErrors. */
  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const size = Math.max(1, this.options.batchSize ?? DEFAULT_BATCH);
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += size) vectors.push(...(await this.batch(texts.slice(start, start + size), signal)));
    return vectors;
  }

  /** The vector length the model produces, asked once (one short text embedded); a failure is not cached. */
  dimensions(): Promise<number> {
    if (!this.probed) {
      this.probed = this.embed(['dimension probe']).then(([vector]) => vector!.length);
      this.probed.catch(() => (this.probed = undefined));
    }
    return this.probed;
  }

  private async batch(input: string[], signal?: AbortSignal): Promise<number[][]> {
    const dimensions = this.requestedDimensions ? { dimensions: this.requestedDimensions } : {};
    const body = { model: this.model, input, ...dimensions, encoding_format: 'float' };
    const answer = await postWithRetries(this.options, { path: '/v1/embeddings', model: this.model, body, failure: EmbeddingError, signal });
    return this.read(answer, input.length);
  }

  /** `{data: [{index, embedding}]}` → one finite vector per input, all of one length, in input order. */
  private read(answer: unknown, count: number): number[][] {
    const bad = (what: string) => malformed(EmbeddingError, this.model, what);
    const data = (answer as { data?: unknown } | null)?.data;
    if (!Array.isArray(data) || data.length !== count) throw bad(`expected ${count} embeddings, got ${Array.isArray(data) ? data.length : 'none'}`);
    const vectors: number[][] = new Array(count);
    for (const [position, item] of data.entries()) {
      const { index = position, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || vectors[index]) throw bad(`embedding index ${String(index)} is out of range or repeated`);
      if (!isVector(embedding)) throw bad(`embedding ${index} is not a list of finite numbers`);
      vectors[index] = normalise(embedding);
    }
    if (new Set(vectors.map((v) => v.length)).size > 1) throw bad('embeddings of different lengths');
    return vectors;
  }
}
