import type { ScheduleStore } from '../../src/schedules/store.js';
import type { TickScheduler } from '../../src/schedules/scheduler.js';

/** Schedules (or timers) handled per step, and the most steps one pass takes: 1,000,000 schedules. */
const BATCH = 500;
const MAX_BATCHES = 2000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BEFORE_EVERY_UUID = '00000000-0000-0000-0000-000000000000';

export interface Reconciled {
  enabled: number;
  timers: number;
  registered: number;
  removed: number;
}

/** Registers a timer for every enabled schedule that has none, in batches (BullMQ's upserts of a batch go out pipelined). */
async function registerMissing(store: ScheduleStore, timers: TickScheduler): Promise<number> {
  let after = BEFORE_EVERY_UUID;
  let registered = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const page = await store.enabledAfter(after, BATCH);
    if (page.length === 0) break;
    const present = await timers.registered(page.map((schedule) => schedule.id));
    const missing = page.filter((schedule) => !present.has(schedule.id));
    await Promise.all(missing.map((schedule) => timers.register(schedule.id, schedule)));
    registered += missing.length;
    after = page.at(-1)!.id;
  }
  return registered;
}

/** Removes the timers of schedules that are gone or disabled. */
async function removeOrphans(store: ScheduleStore, timers: TickScheduler): Promise<number> {
  let cursor = '0';
  let removed = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const step = await timers.scan(cursor, BATCH);
    const wanted = await store.enabledAmong(step.ids.filter((id) => UUID.test(id)));
    const orphans = step.ids.filter((id) => !wanted.has(id));
    await Promise.all(orphans.map((id) => timers.unregister(id)));
    removed += orphans.length;
    cursor = step.cursor;
    if (cursor === '0') break;
  }
  return removed;
}

/**
 * Brings BullMQ's timers in line with Postgres when a worker starts: a Redis that lost its keys
 * (or a crash between a row and its timer) is repaired. When the counts agree it costs two counts.
 */
export async function reconcileTimers(store: ScheduleStore, timers: TickScheduler): Promise<Reconciled> {
  const [enabled, registeredBefore] = await Promise.all([store.countEnabled(), timers.count()]);
  if (enabled === registeredBefore) return { enabled, timers: registeredBefore, registered: 0, removed: 0 };
  const registered = await registerMissing(store, timers);
  const removed = await removeOrphans(store, timers);
  return { enabled, timers: registeredBefore, registered, removed };
}
