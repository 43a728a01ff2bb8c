import * as v from 'valibot';
import { count, described, instant, uuid } from '../shared/record-schemas.js';
import { WEBHOOK_EVENTS, type WebhookDelivery, type WebhookEndpoint } from '../db/webhook-models.js';

export const WebhookRecordSchema = v.strictObject({
  id: uuid,
  url: v.string(),
  description: v.string(),
  events: v.array(v.picklist(WEBHOOK_EVENTS)),
  is_active: v.boolean(),
  disabled_reason: v.nullable(v.string()),
  consecutive_failures: count,
  created_at: instant,
  updated_at: instant,
});
export type WebhookRecord = v.InferOutput<typeof WebhookRecordSchema>;
export const WebhookWithSecretSchema = v.strictObject({ ...WebhookRecordSchema.entries, secret: described(v.string(), 'The signing secret (whsec_…), shown in this response only') });
export type WebhookWithSecret = v.InferOutput<typeof WebhookWithSecretSchema>;
export const DeliveryRecordSchema = v.strictObject({
  id: uuid,
  event: v.picklist(WEBHOOK_EVENTS),
  run_id: v.nullable(uuid),
  /** DESIGN §24: the eval an `eval.*` delivery is about. */
  eval_id: v.nullable(uuid),
  status: v.picklist(['pending', 'delivered', 'failed']),
  attempts: count,
  last_status_code: v.nullable(v.number()),
  last_error: v.nullable(v.string()),
  next_attempt_at: v.nullable(instant),
  created_at: instant,
});
export type DeliveryRecord = v.InferOutput<typeof DeliveryRecordSchema>;

export function presentWebhook(endpoint: WebhookEndpoint): WebhookRecord {
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.events,
    is_active: endpoint.is_active,
    disabled_reason: endpoint.disabled_reason,
    consecutive_failures: endpoint.consecutive_failures,
    created_at: endpoint.created_at.toISOString(),
    updated_at: endpoint.updated_at.toISOString(),
  };
}

/** Only in the answer that makes (or rotates) it does the signing secret leave the server. */
export const presentWebhookWithSecret = (endpoint: WebhookEndpoint, secret: string): WebhookWithSecret => ({ ...presentWebhook(endpoint), secret });

export function presentDelivery(delivery: WebhookDelivery): DeliveryRecord {
  return {
    id: delivery.id,
    event: delivery.event,
    run_id: delivery.run_id,
    eval_id: delivery.eval_id ?? null,
    status: delivery.status,
    attempts: delivery.attempts,
    last_status_code: delivery.last_status_code,
    last_error: delivery.last_error,
    next_attempt_at: delivery.next_attempt_at?.toISOString() ?? null,
    created_at: delivery.created_at.toISOString(),
  };
}
