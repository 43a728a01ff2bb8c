import { embed as embedLocally } from './embedding.js';
import { malformed, postWithRetries, type GatewayClientOptions } from './gateway-client.js';

export { EmbeddingError, type GatewayClientOptions } from './gateway-client.js';

/** Turns texts into unit-length vectors, in input order. */
export interface Embedder {
  readonly model: string;
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

const DEFAULT_BATCH = 64;

function normalise(vector: number[]): number[] {
  const norm = Math.hypot(...vector);
  return norm > 0 ? vector.map((x) => x / norm) : vector;
}

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

  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const size = this.options.batchSize ?? DEFAULT_BATCH;
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += size) vectors.push(...(await this.batch(texts.slice(start, start + size), signal)));
    return vectors;
  }

  /** The vector length the model produces, asked once (one short text embedded). */
  dimensions(): Promise<number> {
    this.probed ??= this.embed(['dimension probe']).then(([vector]) => vector!.length);
    this.probed.catch(() => (this.probed = undefined));
    return this.probed;
  }

  private async batch(input: string[], signal?: AbortSignal): Promise<number[][]> {
    const body = { model: this.model, input, encoding_format: 'float', ...(this.requestedDimensions ? { dimensions: this.requestedDimensions } : {}) };
    const answer = await postWithRetries(this.options, '/v1/embeddings', this.model, body, signal);
    return this.read(answer, input.length);
  }

  /** `{data: [{index, embedding}]}` → one finite vector per input, all of one length, in input order. */
  private read(answer: unknown, count: number): number[][] {
    const data = (answer as { data?: unknown })?.data;
    if (!Array.isArray(data) || data.length !== count) throw malformed(this.model, `expected ${count} embeddings, got ${Array.isArray(data) ? data.length : 'none'}`);
    const vectors: number[][] = new Array(count);
    for (const [position, item] of data.entries()) {
      const { index = position, embedding } = item as { index?: unknown; embedding?: unknown };
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || vectors[index]) throw malformed(this.model, `bad embedding index ${String(index)}`);
      if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === 'number' && Number.isFinite(x))) throw malformed(this.model, 'an embedding is not a list of numbers');
      vectors[index] = normalise(embedding as number[]);
    }
    if (new Set(vectors.map((v) => v.length)).size > 1) throw malformed(this.model, 'embeddings of different lengths');
    return vectors;
  }
}
