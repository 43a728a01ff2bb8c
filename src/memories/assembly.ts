import type { Knex } from 'knex';
import type { Config } from '../config.js';
import type { KnowledgeParts } from '../knowledge/assembly.js';
import { MemoryService } from './service.js';
import { MemoryStore } from './store.js';

/** The memory service web and workers share (DESIGN §25), embedding with MEMORY_EMBEDDING_MODEL through the knowledge models. */
export function buildMemoryService(config: Config, knex: Knex, { models, vectors }: Pick<KnowledgeParts, 'models' | 'vectors'>): MemoryService {
  const { embeddingModel, perUser, recallK } = config.memory;
  if (embeddingModel !== 'local' && !config.model.gateway.url) {
    throw new Error(`MEMORY_EMBEDDING_MODEL=${embeddingModel} is a gateway model, and no gateway is configured (GATEWAY_URL); use "local"`);
  }
  const store = new MemoryStore(knex, vectors, { perUser, efSearch: config.knowledge.efSearch });
  return new MemoryService(knex, store, models.embedder(embeddingModel), { perUser, recallK });
}
