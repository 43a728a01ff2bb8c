import type { Logger } from '../../src/logger.js';
import type { WebhookOutbox } from '../../src/webhooks/outbox.js';
import type { WebhookDeliverer } from './deliverer.js';

/** First attempts in flight per worker process; past it, deliveries go straight to the queue. */
const MAX_IN_FLIGHT = 64;

/**
 * A finished run's deliveries, attempted at once by the worker that finished it (no queue hop
 * between `done` and the receiver). A delivery to retry, one past the in-flight bound, and one
 * whose attempt could not even start go to the delivery queue; a worker that dies mid-attempt
 * leaves the row pending, and the outbox sweep queues it.
 */
export class WebhookDispatcher {
  private inFlight = new Set<Promise<void>>();

  constructor(
    private readonly deliverer: WebhookDeliverer,
    private readonly outbox: WebhookOutbox,
    private readonly logger: Logger,
  ) {}

  dispatch(deliveryIds: string[]): void {
    for (const id of deliveryIds) {
      if (this.inFlight.size >= MAX_IN_FLIGHT) {
        this.queue(id);
        continue;
      }
      const attempt = this.deliverer.attemptDelivery(id).then(
        (outcome) => (outcome.next === 'retry' ? this.queue(id, outcome.atMs) : undefined),
        (err: unknown) => {
          this.logger.warn({ err, delivery_id: id }, 'webhook attempt could not be made here; queueing it');
          this.queue(id);
        },
      );
      this.inFlight.add(attempt);
      void attempt.finally(() => this.inFlight.delete(attempt));
    }
  }

  /** Waits for the attempts in flight (shutdown); what is cut off stays pending for the sweep. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  private queue(id: string, atMs?: number): void {
    this.outbox.enqueue([id], atMs).catch((err: unknown) => this.logger.warn({ err, delivery_id: id }, 'webhook delivery not queued; the outbox sweep will queue it'));
  }
}
