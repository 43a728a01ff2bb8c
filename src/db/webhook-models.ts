import { Model } from 'objection';

export const WEBHOOK_EVENTS = ['run.succeeded', 'run.failed', 'run.cancelled', 'run.interrupted', 'run.waiting', 'run.requires_action', 'eval.succeeded', 'eval.failed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** Where a user's run events are POSTed (DESIGN §10). The signing secret is sealed; it leaves the server once, when made. */
export class WebhookEndpoint extends Model {
  static override tableName = 'webhook_endpoints';
  id!: string;
  user_id!: string;
  url!: string;
  description!: string;
  events!: WebhookEvent[];
  is_active!: boolean;
  secret_sealed!: string;
  previous_secret_sealed!: string | null;
  previous_secret_expires_at!: Date | null;
  consecutive_failures!: number;
  disabled_reason!: string | null;
  created_at!: Date;
  updated_at!: Date;

  static override get jsonAttributes() {
    return ['events'];
  }
}

/** One event for one endpoint: the outbox row, and the record of its attempts. Its id is the `webhook-id`. */
export class WebhookDelivery extends Model {
  static override tableName = 'webhook_deliveries';
  id!: string;
  endpoint_id!: string;
  run_id!: string | null;
  eval_id!: string | null;
  event!: WebhookEvent;
  payload!: Record<string, unknown>;
  status!: DeliveryStatus;
  attempts!: number;
  last_status_code!: number | null;
  last_error!: string | null;
  next_attempt_at!: Date | null;
  redeliveries!: number;
  delivered_at!: Date | null;
  created_at!: Date;

  static override get jsonAttributes() {
    return ['payload'];
  }
}
