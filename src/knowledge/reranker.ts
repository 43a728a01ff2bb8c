import { malformed, postWithRetries, RerankError, type GatewayClientOptions } from './gateway-client.js';

export { RerankError } from './gateway-client.js';

export interface RerankResult {
  /** Position in the `documents` passed in. */
  index: number;
  relevance_score: number;
}

/**
 * A gateway rerank model: `POST /v1/rerank {model, query, documents, top_n}` →
 * `{results: [{index, relevance_score}]}` (Jina/Cohere shape). It sits on the query path, so the
 * caller passes options with few retries and a short timeout; failures are RerankErrors, on which
 * the caller keeps its own order.
 */
export class GatewayReranker {
  constructor(
    readonly model: string,
    private readonly options: GatewayClientOptions,
  ) {}

  /** The best `topN` documents, best first. */
  async rerank(query: string, documents: string[], topN: number, signal?: AbortSignal): Promise<RerankResult[]> {
    if (documents.length === 0 || topN <= 0) return [];
    const body = { model: this.model, query, documents, top_n: topN };
    const answer = await postWithRetries(this.options, { path: '/v1/rerank', model: this.model, body, failure: RerankError, signal });
    return this.read(answer, documents.length).slice(0, topN);
  }

  /** Validated results, sorted best first: indexes in range and unique, scores finite. */
  private read(answer: unknown, count: number): RerankResult[] {
    const bad = (what: string) => malformed(RerankError, this.model, what);
    const results = (answer as { results?: unknown } | null)?.results;
    if (!Array.isArray(results)) throw bad('no results list');
    const seen = new Set<number>();
    const read = results.map((item) => {
      const { index, relevance_score: score } = (item ?? {}) as { index?: unknown; relevance_score?: unknown };
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || seen.has(index)) throw bad(`result index ${String(index)} is out of range or repeated`);
      if (typeof score !== 'number' || !Number.isFinite(score)) throw bad(`the relevance score of result ${index} is not a finite number`);
      seen.add(index);
      return { index, relevance_score: score };
    });
    return read.sort((a, b) => b.relevance_score - a.relevance_score);
  }
}
