import { Worker } from 'bullmq';
import type { Knex } from 'knex';
import * as v from 'valibot';
import type { Config } from '../../src/config.js';
import type { Logger } from '../../src/logger.js';
import { createRedis } from '../../src/redis/connection.js';
import { INGEST_QUEUE, IngestJobSchema, ingestJobOptions, type IngestJob } from '../../src/shared/jobs.js';
import { ingestDocument, markFailed } from './ingest.js';
import { trainIfDue } from '../../src/knowledge/ivf.js';

/** Ingestion is CPU-bound (chunking, embedding): a couple at a time per worker process. */
const INGEST_CONCURRENCY = 2;

/** The BullMQ worker that ingests knowledge-base documents. */
export async function startIngestionWorker(config: Config, knex: Knex, bullPrefix: string, logger: Logger): Promise<Worker<IngestJob>> {
  const worker = new Worker<IngestJob>(
    INGEST_QUEUE,
    async (job) => {
      const { documentId } = v.parse(IngestJobSchema, job.data);
      const started = Date.now();
      const outcome = await ingestDocument(knex, documentId);
      logger.info({ document_id: documentId, outcome, ms: Date.now() - started }, 'document ingested');
      const doc = outcome === 'ready' ? await knex('kb_documents').select('knowledge_base_id').where({ id: documentId }).first() : undefined;
      if (doc && (await trainIfDue(knex, doc.knowledge_base_id, { minChunks: config.kbAnnMinChunks }))) {
        logger.info({ knowledge_base_id: doc.knowledge_base_id }, 'semantic index cells trained');
      }
    },
    { connection: createRedis(config.redis, 'patient', 'worker-ingest'), prefix: bullPrefix, concurrency: INGEST_CONCURRENCY },
  );
  // After the last attempt, an unexpected error still ends the document `failed`, never stuck `processing`.
  worker.on('failed', (job, err) => {
    logger.error({ err, document_id: job?.data.documentId }, 'document ingestion failed');
    if (!job || job.attemptsMade < ingestJobOptions.attempts) return;
    knex('kb_documents').select('knowledge_base_id').where({ id: job.data.documentId }).first()
      .then((doc?: { knowledge_base_id: string }) => doc && markFailed(knex, job.data.documentId, doc.knowledge_base_id, 'Ingestion failed unexpectedly; upload the document again'))
      .catch((markErr: unknown) => logger.error({ err: markErr }, 'could not mark the document failed'));
  });
  worker.on('error', (err) => logger.error({ err }, 'ingestion worker error'));
  await worker.waitUntilReady();
  return worker;
}
