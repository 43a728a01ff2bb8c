import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { round } from './support.js';

/**
 * What open SSE streams cost a server process: the same client code opens the same number of
 * streams to each server measured, and samples each the same way (SIGUSR2, which the preloaded
 * gc-on-signal.js answers with a full GC, then a second's wait, then /proc VmRSS, heap used, fds).
 */

/** A server process holding streams: where to POST, and how to read its V8 heap used. */
export interface StreamServer {
  pid: number;
  /** The URL each stream is POSTed to. */
  url: string;
  request: RequestInit;
  heapUsed: () => Promise<number>;
}

export interface StreamSample {
  'open streams': number;
  'RSS MiB': number;
  'V8 heap used MiB': number;
  'open fds': number;
}

const OPEN_AT_ONCE = 200;
/** A stream whose first bytes have not arrived after this long fails the phase. */
const OPEN_TIMEOUT_MS = 30_000;

const statusBytes = (pid: number, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024;

export const openFds = (pid: number | 'self') => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
};

export const softFdLimit = () => Number(/^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]?.replace('unlimited', '1e9') ?? NaN);

/** Streams held open against one server, OPEN_AT_ONCE at a time, until closed. */
class OpenStreams {
  private readonly controllers: AbortController[] = [];
  constructor(private readonly server: StreamServer) {}

  get count(): number {
    return this.controllers.length;
  }

  async openTo(target: number): Promise<void> {
    while (this.controllers.length < target) {
      await Promise.all(Array.from({ length: Math.min(OPEN_AT_ONCE, target - this.controllers.length) }, () => this.openOne()));
    }
  }

  closeAll(): void {
    for (const c of this.controllers.splice(0)) c.abort();
  }

  private async openOne(): Promise<void> {
    const controller = new AbortController();
    this.controllers.push(controller);
    const timer = setTimeout(() => controller.abort(), OPEN_TIMEOUT_MS);
    const res = await fetch(this.server.url, { ...this.server.request, signal: controller.signal });
    if (!res.ok) throw new Error(`stream: status ${res.status}`);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // its first bytes have arrived: the stream is open
    clearTimeout(timer);
    void reader.read().catch(() => {});
  }
}

async function sample(server: StreamServer, count: number): Promise<StreamSample> {
  process.kill(server.pid, 'SIGUSR2');
  await sleep(1000);
  return {
    'open streams': count,
    'RSS MiB': round(statusBytes(server.pid, 'VmRSS') / 2 ** 20, 2),
    'V8 heap used MiB': round((await server.heapUsed()) / 2 ** 20, 2),
    'open fds': openFds(server.pid),
  };
}

/**
 * Samples at 0 and at each step of open streams (after 50 opened and closed, so the code paths are
 * loaded), closes them, and waits (10 s at most) for the server's fds to come back down.
 */
export async function measureStreams(server: StreamServer, steps: number[]): Promise<{ rows: StreamSample[]; seconds: number; fdsAfter: number }> {
  const streams = new OpenStreams(server);
  await streams.openTo(50);
  streams.closeAll();
  await sleep(1000);
  const rows = [await sample(server, 0)];
  const opening = performance.now();
  for (const step of steps) {
    await streams.openTo(step);
    rows.push(await sample(server, step));
  }
  const seconds = (performance.now() - opening) / 1000;
  streams.closeAll();
  let fdsAfter = openFds(server.pid);
  for (let i = 0; i < 100 && fdsAfter > rows[0]!['open fds'] + 50; i++) {
    await sleep(100);
    fdsAfter = openFds(server.pid);
  }
  return { rows, seconds, fdsAfter };
}

/** KiB per stream between the first (0 streams) and the last sample. */
export function perStreamKiB(rows: StreamSample[]): { rss: number; heap: number } {
  const first = rows[0]!;
  const last = rows[rows.length - 1]!;
  const n = last['open streams'] - first['open streams'];
  return { rss: ((last['RSS MiB'] - first['RSS MiB']) * 1024) / n, heap: ((last['V8 heap used MiB'] - first['V8 heap used MiB']) * 1024) / n };
}
