import type { Knex } from 'knex';
import type { Models } from '../db/models.js';
import { resealRows } from '../crypto/rotate.js';
import { WEBHOOK_EVENTS, type WebhookEndpoint, type WebhookEvent } from '../db/webhook-models.js';
import type { Sealer } from '../crypto/sealed.js';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { findOwned, listOwned } from '../db/owned.js';
import { paginate } from '../db/pagination.js';
import type { Pagination } from '../http/validation.js';
import { generateSecret } from './signing.js';
import { hostOf } from '../net/outbound.js';
import type { Actor, AuditEntry, AuditLog } from '../audit/log.js';
import type { WebhookOutbox } from './outbox.js';
import { presentDelivery, presentWebhook, presentWebhookWithSecret } from './records.js';

export { WEBHOOK_EVENTS };

/** An audit entry about a webhook endpoint: where it points (the host only: a URL can carry a token), never its secret. */
export function webhookEntry(action: AuditEntry['action'], endpoint: Pick<WebhookEndpoint, 'id' | 'user_id'>, details: Record<string, unknown> = {}): AuditEntry {
  return { action, targetType: 'webhook', targetId: endpoint.id, details: { user_id: endpoint.user_id, ...details } };
}

/** How long a rotated-out secret still signs, so receivers can switch to the new one. */
const PREVIOUS_SECRET_GRACE_MS = 24 * 3600 * 1000;

/** The sealed secret's context: a sealed value copied to another endpoint (or slot) does not open there. */
export const secretContext = (endpointId: string, slot: 'current' | 'previous' = 'current') => `webhook:${endpointId}:${slot}`;

export interface NewEndpoint {
  url: string;
  events: WebhookEvent[];
  description: string;
  is_active: boolean;
}

export type EndpointChanges = Partial<NewEndpoint>;

/** A user's webhook endpoints and their deliveries (DESIGN §10). The secret is shown once: on create and on rotate. */
export class WebhookService {
  constructor(
    private readonly models: Models,
    private readonly sealer: Sealer,
    private readonly outbox: WebhookOutbox,
    private readonly audit: AuditLog,
  ) {}

  list(userId: string, page: Pagination) {
    return listOwned(this.models.WebhookEndpoint, userId, page, presentWebhook);
  }

  own(userId: string, id: string): Promise<WebhookEndpoint> {
    return findOwned(this.models.WebhookEndpoint, userId, id, 'Webhook');
  }

  async create(userId: string, input: NewEndpoint, actor: Actor) {
    const secret = generateSecret();
    const endpoint = await this.audit.transaction(actor, async (trx) => {
      const row = await this.models.WebhookEndpoint.query(trx).insertAndFetch({ ...input, events: [...new Set(input.events)], user_id: userId, secret_sealed: 'pending' });
      // The secret is sealed under the row's own id, so the row exists first.
      const sealed = await row.$query(trx).patchAndFetch({ secret_sealed: this.sealer.seal(secret, secretContext(row.id)) });
      return { result: sealed, entries: [webhookEntry('webhook.create', sealed, { host: hostOf(input.url), events: sealed.events })] };
    });
    return presentWebhookWithSecret(endpoint, secret);
  }

  async update(userId: string, id: string, changes: EndpointChanges, actor: Actor) {
    const endpoint = await this.own(userId, id);
    // Switching an endpoint back on gives it a fresh count of failures.
    const revived = changes.is_active === true && !endpoint.is_active ? { consecutive_failures: 0, disabled_reason: null } : {};
    const events = changes.events ? { events: [...new Set(changes.events)] } : {};
    const details = { fields: Object.keys(changes), ...(changes.url !== undefined && { host: { from: hostOf(endpoint.url), to: hostOf(changes.url) } }) };
    return this.audit.transaction(actor, async (trx) => {
      const updated = await endpoint.$query(trx).patchAndFetch({ ...changes, ...events, ...revived, updated_at: new Date() });
      return { result: presentWebhook(updated), entries: [webhookEntry('webhook.update', updated, details)] };
    });
  }

  async remove(userId: string, id: string, actor: Actor): Promise<void> {
    await this.audit.transaction(actor, async (trx) => {
      const [deleted] = await trx('webhook_endpoints').where({ id, user_id: userId }).delete().returning(['id', 'user_id', 'url']);
      if (!deleted) throw new NotFoundError('Webhook not found');
      return { result: undefined, entries: [webhookEntry('webhook.delete', deleted, { host: hostOf(deleted.url) })] };
    });
  }

  /** A new secret, shown once; the old one keeps signing alongside it for a day. */
  async rotateSecret(userId: string, id: string, actor: Actor) {
    const endpoint = await this.own(userId, id);
    const secret = generateSecret();
    const previous = this.sealer.open(endpoint.secret_sealed, secretContext(endpoint.id));
    const updated = await this.audit.transaction(actor, async (trx) => {
      const row = await endpoint.$query(trx).patchAndFetch({
        secret_sealed: this.sealer.seal(secret, secretContext(endpoint.id)),
        previous_secret_sealed: this.sealer.seal(previous, secretContext(endpoint.id, 'previous')),
        previous_secret_expires_at: new Date(Date.now() + PREVIOUS_SECRET_GRACE_MS),
        updated_at: new Date(),
      });
      return { result: row, entries: [webhookEntry('webhook.rotate_secret', row)] };
    });
    return presentWebhookWithSecret(updated, secret);
  }

  async deliveries(userId: string, id: string, page: Pagination) {
    await this.own(userId, id);
    const query = this.models.WebhookDelivery.query().where({ endpoint_id: id }).orderBy([{ column: 'created_at', order: 'desc' }, 'id']);
    return paginate(query, page, presentDelivery);
  }

  /** Delivers again, under the same `webhook-id` (receivers dedupe on it), with a fresh set of attempts. */
  async redeliver(userId: string, id: string, deliveryId: string) {
    const endpoint = await this.own(userId, id);
    if (!endpoint.is_active) throw new ConflictError('endpoint_disabled', 'The webhook is disabled; enable it (PATCH is_active) before redelivering');
    const delivery = await this.models.WebhookDelivery.query().findOne({ id: deliveryId, endpoint_id: id });
    if (!delivery) throw new NotFoundError('Delivery not found');
    await delivery.$query().patch({ status: 'pending', redeliveries: delivery.redeliveries + 1, next_attempt_at: new Date() });
    await this.outbox.redeliver(delivery.id, delivery.redeliveries);
    return presentDelivery(delivery);
  }
}

/** Re-seals every webhook signing secret (current, and the one a rotation keeps for a day) not yet sealed with the current key. */
export function rotateWebhookSecrets(knex: Knex, sealer: Sealer): Promise<{ checked: number; resealed: number }> {
  type Row = { id: string; secret_sealed: string; previous_secret_sealed: string | null };
  return resealRows<Row>(knex, 'webhook_endpoints', ['secret_sealed', 'previous_secret_sealed'], (row) => {
    const patch: Record<string, string> = {};
    if (!sealer.isCurrent(row.secret_sealed, secretContext(row.id))) patch.secret_sealed = sealer.reseal(row.secret_sealed, secretContext(row.id));
    if (row.previous_secret_sealed && !sealer.isCurrent(row.previous_secret_sealed, secretContext(row.id, 'previous'))) {
      patch.previous_secret_sealed = sealer.reseal(row.previous_secret_sealed, secretContext(row.id, 'previous'));
    }
    const count = Object.keys(patch).length;
    return count > 0 ? { patch, count } : undefined;
  });
}
