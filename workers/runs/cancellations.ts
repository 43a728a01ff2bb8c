import type { RedisClient as Redis } from '../../src/shared/redis-scripts.js';
import { RunCancelled } from './run-control.js';

/**
 * Hears cancels for the runs this worker process holds, on one shared channel, and aborts
 * their in-flight model call or tool at once. A cancel missed while the connection was down
 * is still seen at the run's next breakpoint or heartbeat (the flag is a Redis key).
 */
export class CancellationListener {
  private readonly running = new Map<string, AbortController>();

  private constructor(private readonly subscriber: Redis) {
    subscriber.on('message', (_channel: string, runId: string) => this.running.get(runId)?.abort(new RunCancelled()));
  }

  static async start(subscriber: Redis, channel: string): Promise<CancellationListener> {
    const listener = new CancellationListener(subscriber);
    await subscriber.subscribe(channel);
    return listener;
  }

  /** The run's cancel controller, registered until `release` is called. */
  register(runId: string): { controller: AbortController; release: () => void } {
    const controller = new AbortController();
    this.running.set(runId, controller);
    return { controller, release: () => this.running.delete(runId) };
  }

  close(): void {
    this.subscriber.disconnect();
  }
}
