import { Worker, type Job } from 'bullmq';
import type { Knex } from 'knex';
import * as v from 'valibot';
import type { Config } from '../../src/config.js';
import type { Logger } from '../../src/logger.js';
import { createRedis } from '../../src/redis/connection.js';
import { INGEST_QUEUE, IngestJobSchema, ingestJobOptions, type IngestJob } from '../../src/shared/jobs.js';
import type { KnowledgeParts } from '../../src/knowledge/assembly.js';
import { abandonGeneration, dropStaleVectors } from '../../src/knowledge/reembedding.js';
import { ingestDocument, markFailed, type IngestionDeps } from './ingest.js';
import { reembedKnowledgeBase } from './reembed.js';
import { DEFAULT_EXTRACT_LIMITS } from './extract.js';

/** Ingestion is CPU-bound (parsing, chunking, local embedding): a couple at a time per worker process. */
const INGEST_CONCURRENCY = 2;

export function ingestionDeps(config: Config, knex: Knex, { models, vectors }: KnowledgeParts): IngestionDeps {
  const limits = { ...DEFAULT_EXTRACT_LIMITS, maxPages: config.knowledge.maxPages, timeoutMs: config.knowledge.parseTimeoutMs };
  return { knex, models, vectors, limits };
}

/** The BullMQ worker that ingests knowledge-base documents and re-embeds knowledge bases. */
export async function startIngestionWorker(config: Config, knex: Knex, knowledge: KnowledgeParts, bullPrefix: string, logger: Logger): Promise<Worker<IngestJob>> {
  const deps = ingestionDeps(config, knex, knowledge);
  logger.info({ vector_search: await deps.vectors.path() }, 'knowledge vector search path');
  const worker = new Worker<IngestJob>(INGEST_QUEUE, (job) => process(deps, job, logger), {
    connection: createRedis(config.redis, 'patient', 'worker-ingest'),
    prefix: bullPrefix,
    concurrency: INGEST_CONCURRENCY,
  });
  // After the last attempt, an unexpected error still ends the document `failed` (never stuck
  // `processing`), or the re-embedding abandoned (the knowledge base keeps its vectors).
  worker.on('failed', (job, err) => {
    logger.error({ err, job: job?.data }, 'knowledge job failed');
    if (!job || job.attemptsMade < ingestJobOptions.attempts) return;
    giveUp(knex, job.data, err).catch((giveUpErr: unknown) => logger.error({ err: giveUpErr }, 'could not record the knowledge job failure'));
  });
  worker.on('error', (err) => logger.error({ err }, 'ingestion worker error'));
  await worker.waitUntilReady();
  return worker;
}

async function process(deps: IngestionDeps, job: Job<IngestJob>, logger: Logger): Promise<void> {
  const data = v.parse(IngestJobSchema, job.data);
  const started = Date.now();
  if ('reembed' in data) {
    const { knowledgeBaseId, generation } = data.reembed;
    const outcome = await reembedKnowledgeBase(deps, knowledgeBaseId, generation);
    logger.info({ knowledge_base_id: knowledgeBaseId, generation, outcome, ms: Date.now() - started }, 'knowledge base re-embedded');
    return;
  }
  const ingested = await ingestDocument(deps, data.documentId);
  logger.info({ document_id: data.documentId, outcome: ingested.outcome, ms: Date.now() - started }, 'document ingested');
  if (ingested.outcome === 'ready' && (await deps.vectors.ensureIndex(ingested.vectors))) {
    logger.info({ knowledge_base_id: ingested.vectors.knowledgeBaseId }, 'semantic index ready');
  }
}

async function giveUp(knex: Knex, data: IngestJob, err: Error): Promise<void> {
  if ('reembed' in data) {
    const { knowledgeBaseId, generation } = data.reembed;
    await abandonGeneration(knex, knowledgeBaseId, generation, `Re-embedding failed; the previous vectors are kept: ${err.message}`);
    await dropStaleVectors(knex, knowledgeBaseId);
    return;
  }
  const doc: { knowledge_base_id: string } | undefined = await knex('kb_documents').select('knowledge_base_id').where({ id: data.documentId }).first();
  if (doc) await markFailed(knex, data.documentId, doc.knowledge_base_id, `Ingestion failed: ${err.message}; upload the document again`);
}
