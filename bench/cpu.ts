import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Knex } from 'knex';
import type { RedisClient as Redis } from '../src/shared/redis-scripts.js';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** User + system CPU seconds a process has used so far (0 once it is gone). */
export function cpuSeconds(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces) start at field 3; utime and stime are fields 14 and 15.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

export interface CpuSources {
  web: number;
  worker: number;
  knex: Knex;
  redis: Redis;
}

/** The Postgres backends serving the benchmark's database, except the one asking. */
async function backendPids(knex: Knex): Promise<number[]> {
  const { rows } = await knex.raw('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
  return (rows as { pid: number }[]).map((r) => r.pid);
}

async function redisPid(redis: Redis): Promise<number> {
  const info = await redis.info('server');
  return Number(/process_id:(\d+)/.exec(info)?.[1]);
}

export type CpuReading = Record<'web' | 'worker' | 'postgres' | 'redis', number>;

/** CPU seconds spent by web, worker, their Postgres backends and Redis between start() and the returned stop(). */
export async function meterCpu(sources: CpuSources): Promise<() => Promise<CpuReading>> {
  const redis = await redisPid(sources.redis);
  const before = new Map<number, number>();
  for (const pid of [sources.web, sources.worker, redis, ...(await backendPids(sources.knex))]) before.set(pid, cpuSeconds(pid));
  return async () => {
    const delta = (pid: number) => cpuSeconds(pid) - (before.get(pid) ?? 0);
    const backends = await backendPids(sources.knex);
    return {
      web: delta(sources.web),
      worker: delta(sources.worker),
      postgres: backends.reduce((sum, pid) => sum + delta(pid), 0),
      redis: delta(redis),
    };
  };
}
