import type { Queue } from 'bullmq';
import type { ScheduleTick } from '../shared/jobs.js';
import type { RedisClient } from '../shared/redis-scripts.js';
import { repeatOptions, type Timing } from './timing.js';

const TICK = 'tick';
/** A tick that fails is not tried again (a retried tick could start a second run); finished ones leave nothing. */
const TICK_OPTIONS = { attempts: 1, removeOnComplete: true, removeOnFail: { age: 24 * 3600, count: 1000 } };

/** The planned instant of a tick job: BullMQ names each `repeat:<scheduler id>:<planned ms>`. */
export function plannedAt(jobId: string | undefined): Date | null {
  const ms = Number(jobId?.slice(jobId.lastIndexOf(':') + 1));
  return Number.isSafeInteger(ms) && ms > 0 ? new Date(ms) : null;
}

/**
 * The timers of schedules: one BullMQ job scheduler per enabled schedule, with the schedule's id.
 * BullMQ keeps one delayed job per scheduler and adds the next when a worker takes it, so one tick
 * starts one job however many workers listen, and a long outage leaves one overdue tick, not a pile.
 */
export class TickScheduler {
  constructor(
    private readonly queue: Queue<ScheduleTick>,
    /** The connection the queue uses: reads BullMQ's sorted set of timers directly, in bulk. */
    private readonly redis: RedisClient,
    private readonly now: () => number = Date.now,
  ) {}

  /** Creates or replaces the schedule's timer; the instant it fires next (null if never). */
  async register(scheduleId: string, timing: Timing): Promise<Date | null> {
    const job = await this.queue.upsertJobScheduler(scheduleId, repeatOptions(timing, this.now()), { name: TICK, data: { scheduleId }, opts: TICK_OPTIONS });
    return plannedAt(job?.id);
  }

  async unregister(scheduleId: string): Promise<void> {
    await this.queue.removeJobScheduler(scheduleId);
  }

  /** The instant the schedule's timer fires next, as BullMQ holds it; null without a timer. */
  async nextTick(scheduleId: string): Promise<Date | null> {
    const scheduler = await this.queue.getJobScheduler(scheduleId);
    return scheduler?.next ? new Date(scheduler.next) : null;
  }

  count(): Promise<number> {
    return this.queue.getJobSchedulersCount();
  }

  /** Which of `scheduleIds` have a timer: one command. */
  async registered(scheduleIds: string[]): Promise<Set<string>> {
    if (scheduleIds.length === 0) return new Set();
    const scores = await this.redis.zmscore(this.queue.keys.repeat!, ...scheduleIds);
    return new Set(scheduleIds.filter((_, i) => scores[i] !== null));
  }

  /**
   * One step of a scan over every timer's schedule id (ZSCAN: what stays registered throughout is
   * seen at least once, however the set changes meanwhile). Cursor "0" starts it and ends it.
   */
  async scan(cursor: string, count: number): Promise<{ cursor: string; ids: string[] }> {
    const [next, flat] = await this.redis.zscan(this.queue.keys.repeat!, cursor, 'COUNT', count);
    return { cursor: next, ids: flat.filter((_, i) => i % 2 === 0) };
  }
}
