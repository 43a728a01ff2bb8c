import { getNextMillis, type RepeatOptions } from 'bullmq';

/**
 * When a schedule fires (DESIGN §19): a cron of 5 fields, or 6 with seconds first, read in an IANA
 * time zone (so DST follows it), or every N seconds. Cron instants are computed by BullMQ's own
 * rule (`getNextMillis`, cron-parser underneath), the one its job schedulers fire by.
 */
export interface Timing {
  cron: string | null;
  every_seconds: number | null;
  timezone: string;
}

/** The longest `every_seconds`: a year. */
export const MAX_EVERY_SECONDS = 365 * 24 * 3600;
export const MAX_CRON_LENGTH = 200;
/** Occurrences sampled for a cron's shortest gap, and how far ahead at most (yearly crons stop early). */
const GAP_SAMPLES = 64;
const GAP_HORIZON_MS = 2 * 366 * 24 * 3600 * 1000;

const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/;

/** The zone's canonical IANA name ("europe/berlin" → "Europe/Berlin"), or undefined when no such zone is known. */
export function canonicalTimeZone(name: string): string | undefined {
  if (name.length > 64 || !IANA_NAME.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

export const cronFieldCount = (cron: string) => cron.trim().split(/\s+/).length;

/** The first instant after `from` the cron names in `timezone`, as BullMQ computes it; null if it names none. */
export function nextCronAt(cron: string, timezone: string, from: Date): Date | null {
  const ms = getNextMillis(from.getTime(), { pattern: cron, tz: timezone });
  return ms === undefined ? null : new Date(ms);
}

/** Why the cron cannot be used, or undefined when it can (its field count is checked apart). */
export function cronProblem(cron: string, timezone: string, from: Date): string | undefined {
  try {
    return nextCronAt(cron, timezone, from) ? undefined : 'never fires';
  } catch (err) {
    return `is not a valid cron expression: ${(err as Error).message}`;
  }
}

/**
 * The shortest gap (seconds) between consecutive occurrences of a valid cron after `from`,
 * sampled over a bounded number of occurrences; it stops at the first gap under `floorSeconds`.
 */
export function shortestCronGapSeconds(cron: string, timezone: string, from: Date, floorSeconds: number): number {
  let previous = nextCronAt(cron, timezone, from);
  if (!previous) return Infinity;
  const horizon = previous.getTime() + GAP_HORIZON_MS;
  let shortest = Infinity;
  for (let i = 1; i < GAP_SAMPLES && shortest >= floorSeconds; i++) {
    const next = nextCronAt(cron, timezone, previous);
    if (!next) break;
    shortest = Math.min(shortest, (next.getTime() - previous.getTime()) / 1000);
    if (next.getTime() > horizon) break;
    previous = next;
  }
  return shortest;
}

/**
 * BullMQ's repeat options of a timing. `every` starts one interval from now (BullMQ alone would
 * fire at once); after that BullMQ keeps the phase, also across re-registrations.
 */
export function repeatOptions(timing: Timing, nowMs: number): RepeatOptions {
  if (timing.cron) return { pattern: timing.cron, tz: timing.timezone };
  const every = timing.every_seconds! * 1000;
  return { every, startDate: nowMs + every };
}

export interface TimingProblem {
  field: 'cron' | 'every_seconds';
  message: string;
}

/**
 * What is wrong with a timing as a whole (each field's own form is checked where it arrives):
 * exactly one of `cron` and `every_seconds`, and a cron that never fires sooner than
 * `minIntervalSeconds` after its previous occurrence.
 */
export function timingProblems(timing: Timing, minIntervalSeconds: number, now: Date): TimingProblem[] {
  if ((timing.cron === null) === (timing.every_seconds === null)) {
    const message = timing.cron === null ? 'send one of cron and every_seconds' : 'send cron or every_seconds, not both';
    return [
      { field: 'cron', message },
      { field: 'every_seconds', message },
    ];
  }
  if (timing.cron === null) return [];
  let gap: number;
  try {
    gap = shortestCronGapSeconds(timing.cron, timing.timezone, now, minIntervalSeconds);
  } catch (err) {
    return [{ field: 'cron', message: `is not a valid cron expression: ${(err as Error).message}` }];
  }
  if (gap >= minIntervalSeconds) return [];
  return [{ field: 'cron', message: `fires ${gap} s after its previous occurrence; schedules fire at most every ${minIntervalSeconds} s (SCHEDULE_MIN_INTERVAL_S)` }];
}
