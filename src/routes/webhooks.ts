import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { DeliveryRecordSchema, presentWebhook, WebhookRecordSchema, WebhookWithSecretSchema } from '../webhooks/records.js';
import { pageOf } from '../shared/record-schemas.js';
import { actorOf } from '../auth/actor.js';
import { paginationQuery, uuidText } from '../http/validation.js';
import { outboundUrl, type OutboundPolicy } from '../net/outbound.js';
import { WEBHOOK_EVENTS } from '../db/webhook-models.js';

const events = v.pipe(v.array(v.picklist(WEBHOOK_EVENTS)), v.minLength(1, 'subscribe to at least one event'), v.maxLength(WEBHOOK_EVENTS.length * 2));
const description = v.pipe(v.string(), v.maxLength(2000));

const bodies = (policy: OutboundPolicy) => ({
  create: v.strictObject({ url: outboundUrl(policy), events, description: v.optional(description, ''), is_active: v.optional(v.boolean(), true) }),
  update: v.pipe(
    v.strictObject({ url: v.optional(outboundUrl(policy)), events: v.optional(events), description: v.optional(description), is_active: v.optional(v.boolean()) }),
    v.check((body) => Object.keys(body).length > 0, 'send at least one of url, events, description, is_active'),
  ),
});

const WebhookPath = v.object({ id: uuidText });
const DeliveryPath = v.object({ id: uuidText, deliveryId: uuidText });

/** Webhooks (DESIGN §10): full access; restricted users may read, not write; another user's → 404. */
export function webhookRoutes({ webhooks, config }: Services): Route[] {
  const { create, update } = bodies(config.outbound);
  return [
    route({
      method: 'GET',
      path: '/api/webhooks',
      summary: "List the caller's webhook endpoints",
      auth: {},
      responses: { 200: pageOf(WebhookRecordSchema) },
      query: paginationQuery,
      handle: ({ principal, query }) => webhooks.list(principal.user.id, query),
    }),
    route({
      method: 'POST',
      path: '/api/webhooks',
      summary: 'Subscribe an endpoint to run events; the signing secret (whsec_…) is in this response only',
      auth: { writes: true },
      responses: { 201: WebhookWithSecretSchema },
      body: create,
      status: 201,
      handle: ({ principal, body, ctx }) => webhooks.create(principal.user.id, body, actorOf(principal, ctx)),
    }),
    route({
      method: 'GET',
      path: '/api/webhooks/:id',
      summary: 'Read a webhook endpoint',
      auth: {},
      responses: { 200: WebhookRecordSchema },
      params: WebhookPath,
      handle: async ({ principal, params }) => presentWebhook(await webhooks.own(principal.user.id, params.id)),
    }),
    route({
      method: 'PATCH',
      path: '/api/webhooks/:id',
      summary: 'Change a webhook endpoint (is_active: true switches a disabled one back on)',
      auth: { writes: true },
      responses: { 200: WebhookRecordSchema },
      params: WebhookPath,
      body: update,
      handle: ({ principal, params, body, ctx }) => webhooks.update(principal.user.id, params.id, body, actorOf(principal, ctx)),
    }),
    route({
      method: 'DELETE',
      path: '/api/webhooks/:id',
      summary: 'Delete a webhook endpoint and its deliveries',
      auth: { writes: true },
      responses: { 204: null },
      params: WebhookPath,
      status: 204,
      handle: ({ principal, params, ctx }) => webhooks.remove(principal.user.id, params.id, actorOf(principal, ctx)),
    }),
    route({
      method: 'POST',
      path: '/api/webhooks/:id/rotate-secret',
      summary: 'Replace the signing secret (shown once); the old one also signs for 24 h',
      auth: { writes: true },
      responses: { 200: WebhookWithSecretSchema },
      params: WebhookPath,
      handle: ({ principal, params, ctx }) => webhooks.rotateSecret(principal.user.id, params.id, actorOf(principal, ctx)),
    }),
    route({
      method: 'GET',
      path: '/api/webhooks/:id/deliveries',
      summary: "List a webhook's deliveries, newest first",
      auth: {},
      responses: { 200: pageOf(DeliveryRecordSchema) },
      params: WebhookPath,
      query: paginationQuery,
      handle: ({ principal, params, query }) => webhooks.deliveries(principal.user.id, params.id, query),
    }),
    route({
      method: 'POST',
      path: '/api/webhooks/:id/deliveries/:deliveryId/redeliver',
      summary: 'Deliver again under the same webhook-id, with fresh attempts',
      auth: { writes: true },
      responses: { 202: DeliveryRecordSchema },
      errors: [409],
      params: DeliveryPath,
      status: 202,
      handle: ({ principal, params }) => webhooks.redeliver(principal.user.id, params.id, params.deliveryId),
    }),
  ];
}
