import type { Knex } from 'knex';
import type { Queue } from 'bullmq';
import type { Run } from '../db/models.js';
import type { WebhookEvent } from '../db/webhook-models.js';
import type { Usage } from '../shared/events.js';
import { webhookJobOptions, type WebhookJob } from '../shared/jobs.js';

/** A run's final (or waiting) state as the webhook body says it (DESIGN §10). */
export interface RunOutcome {
  status: string;
  answer: string | null;
  finishReason: string | null;
  error: { code: string; message: string } | null;
  usage: Usage;
  durationMs: number;
}

export function runEventPayload(event: WebhookEvent, run: Run, outcome: RunOutcome, at = new Date()) {
  return {
    type: event,
    timestamp: at.toISOString(),
    data: {
      run_id: run.id,
      conversation_id: run.conversation_id,
      agent_id: run.agent_id,
      mode: run.mode,
      status: outcome.status,
      answer: outcome.answer,
      finish_reason: outcome.finishReason,
      error: outcome.error,
      usage: outcome.usage,
      duration_ms: outcome.durationMs,
      user_metadata: run.user_metadata,
    },
  };
}

const SWEEP_BATCH = 500;

/**
 * The outbox's far side: delivery rows (written with the run's final state) become jobs on the
 * delivery queue. The job id is the delivery id, so queueing twice (a worker and the sweep) makes
 * one job; every attempt of it carries the same `webhook-id`.
 */
export class WebhookOutbox {
  constructor(
    private readonly knex: Knex,
    private readonly queue: Queue<WebhookJob>,
    private readonly options: { maxAttempts: number; timeoutMs: number },
  ) {}

  /** Queues deliveries, to be attempted at `atMs` (default: now). */
  async enqueue(deliveryIds: string[], atMs?: number): Promise<void> {
    if (deliveryIds.length === 0) return;
    const delay = atMs === undefined ? 0 : Math.max(0, atMs - Date.now());
    const options = webhookJobOptions(this.options.maxAttempts);
    await this.queue.addBulk(deliveryIds.map((deliveryId) => ({ name: 'deliver', data: { deliveryId }, opts: { ...options, delay, jobId: deliveryId } })));
  }

  /** A manual redelivery: a new attempt sequence under the same `webhook-id`. */
  async redeliver(deliveryId: string, sequence: number): Promise<void> {
    // BullMQ job ids may not contain ':'.
    await this.queue.add('deliver', { deliveryId }, { ...webhookJobOptions(this.options.maxAttempts), jobId: `${deliveryId}_${sequence}` });
  }

  /**
   * Queues pending deliveries overdue by more than an attempt's time: their writer died before its
   * attempt or before queueing the retry (a job still there makes the add a no-op). How many it looked at.
   */
  async sweep(): Promise<number> {
    const grace = this.options.timeoutMs + OVERDUE_MARGIN_MS;
    const rows: { id: string }[] = await this.knex('webhook_deliveries')
      .select('id')
      .where({ status: 'pending' })
      .where(this.knex.raw('coalesce(next_attempt_at, created_at)'), '<', this.knex.raw(`now() - make_interval(secs => ?)`, [grace / 1000]))
      .orderByRaw('coalesce(next_attempt_at, created_at)')
      .limit(SWEEP_BATCH);
    await this.enqueue(rows.map((r) => r.id));
    return rows.length;
  }
}

/** How far past its time a pending delivery must be, beyond one attempt's timeout, before the sweep queues it. */
const OVERDUE_MARGIN_MS = 5000;
