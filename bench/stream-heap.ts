import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRedis } from './capacity.js';
import { freePort } from '../test/support/redis-server.js';
import { benchEnvironment, FEATURE_ENVS, round, stop } from './support.js';

/**
 * What one open stream costs the web, beside a bare `node:http` server holding the same stream
 * (`node dist/bench/stream-heap.js [streams]`). As in runs-gateway's phase (4): a web without a
 * worker (every POSTed run stays queued, its SSE stream open), metrics + CORS on, streams opened 200
 * at a time and each read up to its first chunk. At 0 and N streams: RSS (/proc VmRSS) and the live
 * V8 heap (a heap snapshot, taken after a full GC; RSS is read after it at both points); then the snapshots' difference by constructor
 * (objects and self bytes per stream). BENCH_WEB=<path of server.js> measures another build (the base).
 * Snapshots are kept in the directory printed (BENCH_KEEP=1), for a closer look in DevTools.
 */
const STREAMS = Number(process.argv[2] ?? 1000);
const WEB = resolve(process.env.BENCH_WEB ?? fileURLToPath(new URL('../src/server.js', import.meta.url)));
const TOP = 30;

const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024;

interface Snapshot {
  /** Live heap bytes (self sizes of every node). */
  total: number;
  /** By class name: count and self bytes. */
  byName: Map<string, { count: number; bytes: number }>;
}

/** A .heapsnapshot summed by class name (objects by constructor; closures, strings, arrays and code by their kind). */
export function summarise(path: string): Snapshot {
  const raw = JSON.parse(readFileSync(path, 'utf8')) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[] };
  const fields = raw.snapshot.meta.node_fields;
  const types = raw.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const byName = new Map<string, { count: number; bytes: number }>();
  let total = 0;
  for (let i = 0; i < raw.nodes.length; i += width) {
    const type = types[raw.nodes[i + typeAt]!]!;
    const size = raw.nodes[i + sizeAt]!;
    total += size;
    const name = type === 'object' || type === 'native' ? raw.strings[raw.nodes[i + nameAt]!]! : type === 'closure' ? `(closure) ${raw.strings[raw.nodes[i + nameAt]!] || 'anonymous'}` : `(${type})`;
    const entry = byName.get(name) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += size;
    byName.set(name, entry);
  }
  return { total, byName };
}

/** Asks the child for a heap snapshot (--heapsnapshot-signal) and waits until it is written whole. */
async function snapshot(child: ChildProcess, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  child.kill('SIGUSR2');
  for (;;) {
    await sleep(250);
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    const path = join(dir, file);
    const size = statSync(path).size;
    await sleep(500);
    if (size > 0 && statSync(path).size === size && readFileSync(path, 'utf8').trimEnd().endsWith('}')) return path;
  }
}

function spawnReady(args: string[], env: Record<string, string>, ready: RegExp, dir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => ready.test(chunk.toString()) && resolve(child));
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}`)));
  });
}

/** The baseline: a bare node:http server answering every POST with the stream's headers and first event, held open. */
function bareServer(port: number): void {
  const open = new Set<ServerResponse>();
  createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      req.socket.setNoDelay(true);
      res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
      res.write(`: open\n\nid: 1-0\nevent: run\ndata: {"run_id":"${crypto.randomUUID()}"}\n\n`);
      open.add(res);
      res.on('close', () => open.delete(res));
    });
  }).listen(port, '127.0.0.1', () => console.log('bare listening'));
}

const post = (url: string, key: string, signal: AbortSignal) =>
  fetch(`${url}/api/react`, { method: 'POST', signal, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ q: 'hold' }) });

/** Opens `target` streams, 200 at a time, each read up to its first chunk and then held. */
async function openStreams(url: string, key: string, controllers: AbortController[], target: number): Promise<void> {
  while (controllers.length < target) {
    await Promise.all(
      Array.from({ length: Math.min(200, target - controllers.length) }, async () => {
        const controller = new AbortController();
        controllers.push(controller);
        let res = await post(url, key, controller.signal);
        // A busy pool (two cores shared with other work) answers 429: the stream is asked for again.
        for (let tries = 1; res.status === 429 && tries < 10; tries++) {
          await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
          res = await post(url, key, controller.signal);
        }
        if (!res.ok) throw new Error(`stream: status ${res.status}`);
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        await reader.read();
        void reader.read().catch(() => {});
      }),
    );
  }
}

interface Measured {
  rssPerStream: number;
  heapPerStream: number;
  empty: Snapshot;
  full: Snapshot;
}

async function measure(child: ChildProcess, url: string, key: string, dir: string): Promise<Measured> {
  const controllers: AbortController[] = [];
  await openStreams(url, key, controllers, 50);
  for (const c of controllers.splice(0)) c.abort();
  await sleep(1000);
  // RSS read just after each snapshot (a full GC, and the snapshot's own buffers), so both points are alike.
  const empty = summarise(await snapshot(child, dir));
  await sleep(1000);
  const rss0 = rss(child.pid!);
  await openStreams(url, key, controllers, STREAMS);
  await sleep(1000);
  const full = summarise(await snapshot(child, dir));
  await sleep(1000);
  const rss1 = rss(child.pid!);
  for (const c of controllers.splice(0)) c.abort();
  return { rssPerStream: (rss1 - rss0) / STREAMS, heapPerStream: (full.total - empty.total) / STREAMS, empty, full };
}

function printDifference(label: string, { empty, full }: Measured): void {
  const rows = [...full.byName].map(([name, f]) => {
    const e = empty.byName.get(name) ?? { count: 0, bytes: 0 };
    return { name, 'objects/stream': round((f.count - e.count) / STREAMS, 2), 'bytes/stream': round((f.bytes - e.bytes) / STREAMS, 0) };
  });
  rows.sort((a, b) => b['bytes/stream'] - a['bytes/stream']);
  console.log(`\n${label}: the live heap's growth per stream by constructor (top ${TOP})`);
  console.table(Object.fromEntries(rows.slice(0, TOP).map(({ name, ...rest }) => [name.slice(0, 60), rest])));
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'stream-heap-'));
  const redisServer = await startRedis();
  const bench = await benchEnvironment('memory', { redisUrl: redisServer.url });
  const children: ChildProcess[] = [];
  try {
    const { key } = await bench.user('memory@example.test');
    const webPort = await freePort();
    const barePort = await freePort();
    const env = { ...bench.env, ...FEATURE_ENVS.on, PORT: String(webPort), LOG_LEVEL: 'info', RUNS_PER_USER_LIMIT: '100000' };
    const web = await spawnReady([WEB], env, /web listening/, dir);
    children.push(web);
    const bare = await spawnReady([fileURLToPath(import.meta.url), 'bare', String(barePort)], {}, /bare listening/, dir);
    children.push(bare);
    const bareM = await measure(bare, `http://127.0.0.1:${barePort}`, key, dir);
    const webM = await measure(web, `http://127.0.0.1:${webPort}`, key, dir);
    const kib = (n: number) => round(n / 1024, 2);
    console.log(`\n${STREAMS} open streams; web: ${WEB}`);
    console.table({
      'bare node:http': { 'RSS KiB/stream': kib(bareM.rssPerStream), 'heap KiB/stream': kib(bareM.heapPerStream) },
      web: { 'RSS KiB/stream': kib(webM.rssPerStream), 'heap KiB/stream': kib(webM.heapPerStream) },
      'web / bare': { 'RSS KiB/stream': round(webM.rssPerStream / bareM.rssPerStream, 2), 'heap KiB/stream': round(webM.heapPerStream / bareM.heapPerStream, 2) },
    });
    printDifference('bare node:http', bareM);
    printDifference('web', webM);
    console.log(`\nsnapshots in ${dir}`);
  } finally {
    await Promise.all(children.map(stop));
    await bench.drop();
    redisServer.child.kill('SIGTERM');
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === 'bare') bareServer(Number(process.argv[3]));
  else await run().then(() => process.exit(0));
}
