import * as v from 'valibot';
import type { OutputFormat } from './output-schema.js';
import { Queue, type ConnectionOptions } from 'bullmq';
import { BudgetRefSchema } from './budget-terms.js';
import { TRACEPARENT } from '../telemetry/propagation.js';
import { DOC_MODES } from './doc-modes.js';
import { RUN_MODES } from './run-statuses.js';

/** BullMQ queue names and job payloads, shared by web (producer) and workers (consumer). */
export const RUN_QUEUE = 'agent-runs';

const uuid = v.pipe(v.string(), v.uuid());
/** The shape of X-Request-Id the web keeps (src/http/middleware.ts); anything else it replaced with a UUID. */
export const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
/** The longest question or metadata a job carries (StoredRun). */
export const STORED_TEXT_MAX = 64_000;

/**
 * A run's row as the web wrote it, carried by the job when that write was committed asynchronously
 * (issue 26): a worker that finds no row (a Postgres crash lost it) writes it again from this. Only
 * for runs without a client's history, images or sampling, so it stays small.
 */
export const StoredRunSchema = v.object({
  agentId: v.nullable(uuid),
  mode: v.picklist(RUN_MODES),
  query: v.pipe(v.string(), v.maxLength(STORED_TEXT_MAX)),
  userMetadata: v.nullable(v.pipe(v.string(), v.maxLength(STORED_TEXT_MAX))),
  docMode: v.nullable(v.picklist(DOC_MODES)),
  traceId: v.nullable(v.pipe(v.string(), v.maxLength(64))),
  scheduleId: v.nullable(uuid),
  /** DESIGN §24: the eval whose item the run answers, and the agent's version it runs. */
  evalId: v.optional(v.nullable(uuid)),
  agentVersion: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1)))),
  questionId: uuid,
  /** The run opens its conversation (no message before its question): its worker has nothing to read before its model call (issue 36). */
  opensConversation: v.optional(v.literal(true)),
  /** DESIGN §23: the run's output format, when its JSON is at most STORED_FORMAT_MAX (a larger one keeps the run off this path). */
  outputFormat: v.optional(
    v.nullable(
      v.pipe(
        v.looseObject({ type: v.picklist(['json_schema', 'json_object']) }),
        v.transform((format) => format as unknown as OutputFormat),
      ),
    ),
  ),
});
/** The largest output format (as JSON) a job carries with its run's row. */
export const STORED_FORMAT_MAX = 8 * 1024;
export type StoredRun = v.InferOutput<typeof StoredRunSchema>;


/**
 * A run to execute. The conversation and user ids let the worker take the run in Redis while it
 * reads the row; jobs queued by an earlier release carry only the run id (the worker reads them first).
 * `requestId` is the request that started the run, so the worker's log lines of the run name it.
 */
export const RunJobSchema = v.object({
  runId: uuid,
  conversationId: v.optional(uuid),
  userId: v.optional(uuid),
  requestId: v.optional(v.pipe(v.string(), v.regex(REQUEST_ID))),
  /** The token budgets of the key and user that started the run (DESIGN §18), as they were then. */
  budgets: v.optional(v.pipe(v.array(BudgetRefSchema), v.maxLength(2))),
  /**
   * The W3C trace context of the request that started the run (DESIGN §18): every attempt's spans
   * join its trace. One that is not valid is dropped (the run still runs, in a trace of its own).
   */
  traceparent: v.fallback(v.optional(v.pipe(v.string(), v.regex(TRACEPARENT))), undefined),
  /** The run was queued behind the conversation's active run (DESIGN §19): it starts once admitted. */
  queued: v.optional(v.literal(true)),
  stored: v.optional(StoredRunSchema),
});
export type RunJob = v.InferOutput<typeof RunJobSchema>;

/**
 * Knowledge-base work: ingest one document (parse → chunk → embed → index; `jobId` = document id),
 * or fill a knowledge base's pending vector generation with its new embedding model
 * (`jobId` = `reembed_<knowledge base>_<generation>`).
 */
export const INGEST_QUEUE = 'kb-ingest';
export const IngestJobSchema = v.union([
  v.object({ documentId: uuid }),
  v.object({ reembed: v.object({ knowledgeBaseId: uuid, generation: v.pipe(v.number(), v.integer(), v.minValue(1)) }) }),
]);
export type IngestJob = v.InferOutput<typeof IngestJobSchema>;
export const ingestJobOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 24 * 3600 },
};

/**
 * A queue this process adds jobs to, on one of its command connections. BullMQ starts a queue
 * with an INFO for Redis's version, and a queue whose start failed keeps that failure: a start
 * that timed out while the process booted on a busy machine refused every later add (answered
 * 429 "busy"). Adding jobs needs no version (only a Worker's blocking commands do, and each
 * Worker checks it on its own connection), so producers skip it and start with nothing to fail.
 */
export function producerQueue<T = unknown>(name: string, connection: ConnectionOptions, prefix: string): Queue<T> {
  return new Queue<T>(name, { connection, prefix, skipVersionCheck: true });
}

/**
 * Wakes a run parked for approvals (DESIGN §11): its delayed job moves to waiting, for a worker
 * to take. A job that is not delayed (still being parked, or already moving) is left as it is.
 */
export async function wakeRunJob(queue: Queue<RunJob>, runId: string): Promise<void> {
  const job = await queue.getJob(runId);
  await job?.promote().catch(() => {});
}

/**
 * A queued run's job waits delayed; the run before it wakes it when it ends. Should that wake be
 * lost (its worker died), the job looks again after this long, and keeps looking while it waits.
 */
export const QUEUED_RECHECK_MS = 30_000;

export const runJobOptions = {
  // Stalled jobs (a worker that died) are retried by BullMQ itself; a thrown error is final.
  attempts: 1,
  // The run's row is its record, and nothing queues a run twice: a finished job is dropped at once,
  // so a finished run leaves only its expiring event stream in Redis. Failed jobs are kept a while to look into.
  removeOnComplete: true,
  removeOnFail: { age: 24 * 3600, count: 1000 },
};

/**
 * One webhook delivery's attempts (`jobId` = delivery id; a redelivery gets `<id>_<n>`). The
 * deliverer schedules its own retries (the job waits, delayed, between attempts), counting
 * attempts on the delivery row; BullMQ's attempts only bound a job whose workers keep failing.
 */
export const WEBHOOK_QUEUE = 'webhook-deliveries';
export const WebhookJobSchema = v.object({ deliveryId: uuid });
export type WebhookJob = v.InferOutput<typeof WebhookJobSchema>;
export const webhookJobOptions = (maxAttempts: number) => ({
  attempts: maxAttempts,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
});

/**
 * Schedule ticks (DESIGN §19): one BullMQ job scheduler per enabled schedule (its id is the
 * schedule's), which leaves one delayed job per schedule, `repeat:<schedule id>:<planned ms>`.
 */
export const SCHEDULE_QUEUE = 'schedules';
export const ScheduleTickSchema = v.object({ scheduleId: uuid });
export type ScheduleTick = v.InferOutput<typeof ScheduleTickSchema>;

/** DESIGN §24: an eval's driver, one job per eval (its id is the job's): a worker runs its items' runs, at most its concurrency at once. */
export const EVAL_QUEUE = 'evals';
export const EvalJobSchema = v.object({ evalId: uuid });
export type EvalJob = v.InferOutput<typeof EvalJobSchema>;
/** A finished driver's job goes at once, so the sweep can queue the eval again if it ever needs to. */
export const evalJobOptions = { removeOnComplete: true, removeOnFail: true } as const;
