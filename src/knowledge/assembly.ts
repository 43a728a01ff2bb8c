import type { Knex } from 'knex';
import type { Config } from '../config.js';
import { KnowledgeModels } from './models.js';
import { Retriever } from './retrieval.js';
import { VectorStore } from './vector-store.js';

/** The knowledge parts web and workers share, built from config and a live Postgres client. */
export function knowledgeParts(config: Config, knex: Knex) {
  const models = new KnowledgeModels(config.model.gateway, config.knowledge.embeddingBatch);
  const vectors = new VectorStore(knex, { hnswMinVectors: config.knowledge.annMinChunks, efSearch: config.knowledge.efSearch, buildMemoryMb: config.knowledge.buildMemoryMb });
  const retriever = new Retriever(knex, vectors, models);
  return { models, vectors, retriever };
}
export type KnowledgeParts = ReturnType<typeof knowledgeParts>;
