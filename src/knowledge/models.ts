import type { GatewayConfig } from '../config.js';
import { ValidationError } from '../shared/errors.js';
import { GatewayEmbedder, LocalEmbedder, type Embedder, type GatewayClientOptions } from './embedders.js';
import { GatewayReranker } from './reranker.js';

export const LOCAL_EMBEDDING_MODEL = 'local';

/** A reranker sits on the query path: one retry at most, and a short wait. */
const RERANK_RETRIES = 1;

/**
 * The embedding and rerank models knowledge bases name (DESIGN §14): `local`, the built-in
 * lexical embedder, or a gateway model. One client per model and dimension, shared by every
 * request of the process (their connection pool and dimension probe are reused).
 */
export class KnowledgeModels {
  private readonly embedders = new Map<string, Embedder>();
  private readonly rerankers = new Map<string, GatewayReranker>();
  private readonly local = new LocalEmbedder();
  private readonly gateway?: GatewayClientOptions;

  constructor(gateway: GatewayConfig, batchSize: number) {
    if (gateway.url) {
      this.gateway = {
        url: gateway.url,
        apiKey: gateway.apiKey,
        maxRetries: gateway.maxRetries,
        retryBaseMs: gateway.retryBaseMs,
        retryMaxDelayMs: gateway.retryMaxDelayMs,
        timeoutMs: Math.min(gateway.idleTimeoutMs, 60_000),
        batchSize,
      };
    }
  }

  embedder(model: string, dimensions?: number): Embedder {
    if (model === LOCAL_EMBEDDING_MODEL) return this.local;
    const key = `${model}\u0000${dimensions ?? ''}`;
    let embedder = this.embedders.get(key);
    if (!embedder) {
      embedder = new GatewayEmbedder(model, this.requireGateway(model, 'embedding_model'), dimensions);
      this.embedders.set(key, embedder);
    }
    return embedder;
  }

  reranker(model: string): GatewayReranker {
    let reranker = this.rerankers.get(model);
    if (!reranker) {
      reranker = new GatewayReranker(model, { ...this.requireGateway(model, 'rerank_model'), maxRetries: RERANK_RETRIES, timeoutMs: 10_000 });
      this.rerankers.set(model, reranker);
    }
    return reranker;
  }

  /** The vector length a gateway `model` produces (asked once per model and requested dimension). */
  async dimensionsOf(model: string, requested?: number): Promise<number> {
    const embedder = this.embedder(model, requested) as GatewayEmbedder;
    return embedder.dimensions();
  }

  get gatewayConfigured(): boolean {
    return this.gateway !== undefined;
  }

  private requireGateway(model: string, field: 'embedding_model' | 'rerank_model'): GatewayClientOptions {
    if (!this.gateway) {
      throw new ValidationError([{ loc: ['body', field], msg: `"${model}" is a gateway model, and no gateway is configured (GATEWAY_URL); use "local"`, type: 'value_error', input: model }]);
    }
    return this.gateway;
  }
}
