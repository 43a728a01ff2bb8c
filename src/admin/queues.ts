import type { Queue } from 'bullmq';

export interface QueueCounts {
  name: string;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
  /** Jobs held by a pause (the waiting ones, while the queue is paused). */
  paused: number;
  is_paused: boolean;
  /** Worker connections attached to the queue; null when Redis refuses CLIENT LIST. */
  workers: number | null;
}

/**
 * Job counts per BullMQ queue for GET /api/admin/queues, cached briefly so a dashboard polling
 * it (or many admins) cost Redis one round of commands per interval, not per request.
 */
export class QueueStats {
  private cached?: { at: number; value: Promise<QueueCounts[]> };

  constructor(
    private readonly queues: Queue[],
    private readonly ttlMs = 2000,
  ) {}

  counts(): Promise<QueueCounts[]> {
    if (this.cached && Date.now() - this.cached.at < this.ttlMs) return this.cached.value;
    const value = Promise.all(this.queues.map((queue) => countsOf(queue)));
    this.cached = { at: Date.now(), value };
    // A failure is not remembered: the next request asks Redis again.
    value.catch(() => (this.cached = undefined));
    return value;
  }
}

async function countsOf(queue: Queue): Promise<QueueCounts> {
  const [counts, isPaused, workers] = await Promise.all([
    queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed', 'completed'),
    queue.isPaused(),
    queue.getWorkersCount().catch(() => null),
  ]);
  const count = (state: string) => counts[state] ?? 0;
  const waiting = count('waiting') + count('prioritized');
  return {
    name: queue.name,
    waiting,
    active: count('active'),
    delayed: count('delayed'),
    failed: count('failed'),
    completed: count('completed'),
    paused: isPaused ? waiting : 0,
    is_paused: isPaused,
    workers,
  };
}
