import * as v from 'valibot';

/** BullMQ queue names and job payloads, shared by web (producer) and workers (consumer). */
export const RUN_QUEUE = 'agent-runs';

export const RunJobSchema = v.object({ runId: v.pipe(v.string(), v.uuid()) });
export type RunJob = v.InferOutput<typeof RunJobSchema>;

/** Knowledge-base ingestion: parse → chunk → embed → index one document (`jobId` = document id). */
export const INGEST_QUEUE = 'kb-ingest';
export const IngestJobSchema = v.object({ documentId: v.pipe(v.string(), v.uuid()) });
export type IngestJob = v.InferOutput<typeof IngestJobSchema>;
export const ingestJobOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 24 * 3600 },
};

export const runJobOptions = {
  // Stalled jobs (a worker that died) are retried by BullMQ itself; a thrown error is final.
  attempts: 1,
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 24 * 3600 },
};
