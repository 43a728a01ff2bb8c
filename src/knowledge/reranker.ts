import { malformed, postWithRetries, type GatewayClientOptions } from './gateway-client.js';

export interface RerankResult {
  index: number;
  relevance_score: number;
}

/** A gateway rerank model: `POST /v1/rerank {model, query, documents, top_n}` → `{results: [{index, relevance_score}]}` (Jina/Cohere shape). */
export class GatewayReranker {
  constructor(
    readonly model: string,
    private readonly options: GatewayClientOptions,
  ) {}

  async rerank(query: string, documents: string[], topN: number, signal?: AbortSignal): Promise<RerankResult[]> {
    if (documents.length === 0) return [];
    const answer = await postWithRetries(this.options, '/v1/rerank', this.model, { model: this.model, query, documents, top_n: topN }, signal);
    const results = (answer as { results?: unknown })?.results;
    if (!Array.isArray(results)) throw malformed(this.model, 'no results');
    const seen = new Set<number>();
    const read = results.map((item) => {
      const { index, relevance_score: score } = item as { index?: unknown; relevance_score?: unknown };
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= documents.length || seen.has(index)) throw malformed(this.model, `bad result index ${String(index)}`);
      if (typeof score !== 'number' || !Number.isFinite(score)) throw malformed(this.model, 'a relevance score is not a number');
      seen.add(index);
      return { index, relevance_score: score };
    });
    return read.sort((a, b) => b.relevance_score - a.relevance_score).slice(0, topN);
  }
}
