import { DelayedError, type Job } from 'bullmq';
import * as v from 'valibot';
import type { Knex } from 'knex';
import type { Logger } from '../../src/logger.js';
import type { Models } from '../../src/db/models.js';
import type { WebhookDelivery, WebhookEndpoint } from '../../src/db/webhook-models.js';
import type { Sealer } from '../../src/crypto/sealed.js';
import type { FetchLike } from '../../src/net/outbound.js';
import { webhookHeaders } from '../../src/webhooks/signing.js';
import { secretContext } from '../../src/webhooks/service.js';
import { WebhookJobSchema, type WebhookJob } from '../../src/shared/jobs.js';

/** The wait before retry `n` (1-based): the base, four times longer each time (5 s … 23 h with the defaults: about a day in all). */
export const deliveryBackoff = (baseMs: number, retry: number) => baseMs * 4 ** Math.max(0, retry - 1);

/** After this many deliveries in a row failed for good, the endpoint is switched off. */
const FAILURES_TO_DISABLE = 20;
const USER_AGENT = 'agent-platform-webhooks/1';

export interface DelivererOptions {
  maxAttempts: number;
  retryBaseMs: number;
  timeoutMs: number;
  /** Each attempt's outcome (the deliveries metric): the receiver took it, answered non-2xx, or could not be reached in time. */
  onAttempt?: (outcome: 'delivered' | 'rejected' | 'unreachable') => void;
  /** Called when an endpoint is switched off, so the audit log can say so. */
  /** Runs in the transaction that switches the endpoint off, so the two are seen together or not at all. */
  onDisabled?: (endpoint: WebhookEndpoint, reason: string, trx: Knex.Transaction) => Promise<void>;
}

/** An error and what caused it (fetch says only "fetch failed"; its cause says why, e.g. the outbound policy refused). */
function reasonOf(err: unknown): string {
  const parts: string[] = [];
  for (let cause = err, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++) parts.push(cause.message);
  return parts.join(': ');
}

const DONE = { next: 'done' } as const;

type Attempt = { ok: true; status: number } | { ok: false; status: number | null; error: string };

/**
 * Delivers one webhook attempt (DESIGN §10): the stored payload, signed per Standard Webhooks
 * under the endpoint's secret(s), POSTed through the outbound policy within WEBHOOK_TIMEOUT_MS. 2xx is
 * delivered; 410 switches the endpoint off; anything else is retried with backoff under the same
 * `webhook-id`, and the last failure counts against the endpoint. The first attempt is made at
 * once by the worker that finished the run (WebhookDispatcher); retries wait in the delivery queue.
 */
export class WebhookDeliverer {
  constructor(
    private readonly knex: Knex,
    private readonly models: Models,
    private readonly sealer: Sealer,
    private readonly fetch: FetchLike,
    private readonly logger: Logger,
    private readonly options: DelivererOptions,
  ) {}

  /** The delivery queue's processor: one attempt; a retry waits, delayed, in the same job (same `webhook-id`). */
  async deliver(job: Job<WebhookJob>, token?: string): Promise<void> {
    const { deliveryId } = v.parse(WebhookJobSchema, job.data);
    const outcome = await this.attemptDelivery(deliveryId);
    if (outcome.next === 'retry') {
      await job.moveToDelayed(outcome.atMs, token);
      throw new DelayedError();
    }
  }

  /**
   * One attempt of a pending delivery, recorded on its row: delivered, switched off (410, or the
   * endpoint disabled), failed for good after WEBHOOK_MAX_ATTEMPTS, or to be retried at `atMs`.
   */
  async attemptDelivery(deliveryId: string): Promise<{ next: 'done' } | { next: 'retry'; atMs: number }> {
    const found = await this.load(deliveryId);
    if (!found || found.delivery.status !== 'pending') return DONE;
    const { delivery, endpoint } = found;
    if (!endpoint.is_active) {
      await this.record(delivery, { ok: false, status: null, error: 'the endpoint is disabled' }, 'failed');
      return DONE;
    }
    const number = delivery.attempts + 1;
    this.logger.info({ delivery_id: delivery.id, webhook_id: endpoint.id, attempt: number }, 'delivering webhook');
    const attempt = await this.attempt(endpoint, delivery);
    this.options.onAttempt?.(attempt.ok ? 'delivered' : attempt.status === null ? 'unreachable' : 'rejected');
    if (attempt.ok) {
      await this.record(delivery, attempt, 'delivered');
      if (endpoint.consecutive_failures > 0) await this.models.WebhookEndpoint.query().patch({ consecutive_failures: 0 }).where({ id: endpoint.id });
      return DONE;
    }
    if (attempt.status === 410) {
      // Off before the delivery reads failed, so whoever sees the one sees the other.
      await this.disable(endpoint, 'the receiver answered 410 Gone');
      await this.record(delivery, attempt, 'failed');
      return DONE;
    }
    if (number >= this.options.maxAttempts) {
      await this.record(delivery, attempt, 'failed');
      await this.countFailure(endpoint);
      return DONE;
    }
    const atMs = Date.now() + deliveryBackoff(this.options.retryBaseMs, number);
    await this.record(delivery, attempt, 'pending', new Date(atMs));
    return { next: 'retry', atMs };
  }

  /** The delivery and its endpoint, in one query. */
  private async load(deliveryId: string): Promise<{ delivery: WebhookDelivery; endpoint: WebhookEndpoint } | undefined> {
    const { rows } = await this.knex.raw(
      `select d.*, e.user_id as e_user_id, e.url as e_url, e.is_active as e_is_active, e.secret_sealed as e_secret_sealed,
              e.previous_secret_sealed as e_previous_secret_sealed, e.previous_secret_expires_at as e_previous_secret_expires_at,
              e.consecutive_failures as e_consecutive_failures
         from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where d.id = ?`,
      [deliveryId],
    );
    const row = rows[0] as Record<string, unknown> | undefined;
    if (!row) return undefined;
    const endpointFields = Object.fromEntries(Object.entries(row).flatMap(([name, value]) => (name.startsWith('e_') ? [[name.slice(2), value]] : [])));
    const deliveryFields = Object.fromEntries(Object.entries(row).filter(([name]) => !name.startsWith('e_')));
    return {
      delivery: this.models.WebhookDelivery.fromDatabaseJson(deliveryFields),
      endpoint: this.models.WebhookEndpoint.fromDatabaseJson({ ...endpointFields, id: row.endpoint_id }),
    };
  }

  private async attempt(endpoint: WebhookEndpoint, delivery: WebhookDelivery): Promise<Attempt> {
    const body = JSON.stringify(delivery.payload);
    const headers = webhookHeaders(this.secrets(endpoint), delivery.id, Math.floor(Date.now() / 1000), body);
    try {
      const response = await this.fetch(endpoint.url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      await response.body?.cancel().catch(() => {});
      if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
      return { ok: false, status: response.status, error: `the receiver answered ${response.status}` };
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      return { ok: false, status: null, error: timedOut ? `no answer within ${this.options.timeoutMs} ms` : `unreachable: ${reasonOf(err)}` };
    }
  }

  /** The current secret, and during a rotation the one it replaced. */
  private secrets(endpoint: WebhookEndpoint): string[] {
    const current = this.sealer.open(endpoint.secret_sealed, secretContext(endpoint.id));
    const previousValid = endpoint.previous_secret_sealed && endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at.getTime() > Date.now();
    return previousValid ? [current, this.sealer.open(endpoint.previous_secret_sealed!, secretContext(endpoint.id, 'previous'))] : [current];
  }

  private async record(delivery: WebhookDelivery, attempt: Attempt, status: WebhookDelivery['status'], nextAttemptAt: Date | null = null): Promise<void> {
    await this.models.WebhookDelivery.query()
      .patch({
        status,
        attempts: this.knex.raw('attempts + 1') as unknown as number,
        last_status_code: attempt.status,
        last_error: attempt.ok ? null : attempt.error.slice(0, 500),
        next_attempt_at: nextAttemptAt,
        delivered_at: status === 'delivered' ? new Date() : null,
      })
      .where({ id: delivery.id });
  }

  private async countFailure(endpoint: WebhookEndpoint): Promise<void> {
    const [row] = await this.knex('webhook_endpoints').where({ id: endpoint.id }).increment('consecutive_failures', 1).returning('consecutive_failures');
    if ((row?.consecutive_failures ?? 0) >= FAILURES_TO_DISABLE) {
      await this.disable(endpoint, `${FAILURES_TO_DISABLE} deliveries in a row failed`);
    }
  }

  private async disable(endpoint: WebhookEndpoint, reason: string): Promise<void> {
    const switched = await this.knex.transaction(async (trx) => {
      const count = await this.models.WebhookEndpoint.query(trx).patch({ is_active: false, disabled_reason: reason, updated_at: new Date() }).where({ id: endpoint.id, is_active: true });
      if (count > 0) await this.options.onDisabled?.(endpoint, reason, trx);
      return count;
    });
    if (switched > 0) this.logger.warn({ webhook_id: endpoint.id, reason }, 'webhook endpoint disabled');
  }
}
