import net from 'node:net';
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { benchEnvironment, percentile, round, spawnProcess, stop } from './support.js';
import { cpuSeconds } from './cpu.js';
import { exchange, longHistoryBody, sampleHealthz } from './hostile.js';
import { budgetFigures } from './trust-budgets.js';

/**
 * Promises under shared use (DESIGN §21, issue 32), the web's half: GET /healthz latency, asked
 * every 10 ms (open loop), quiet and while hostile requests are in flight, on one web (+ a worker):
 *
 * (a) a 24 MB /v1 history (240 turns of 99,000 characters, each past the local model's window),
 *     posted again and again by 2 clients; (b) 50 uploads (50 users) that send a multipart head and
 *     1 KB of a PNG announcing 5 MB, then stall; (c) 20 clients posting 20 MB bodies to /v1 without
 *     a credential, again and again. Each phase also shows the web's CPU: all threads, and its
 *     event loop's (main) thread alone. Target (DESIGN §21): p99 ≤ 100 ms in every phase.
 * The budget half of `trust` (overshoot, runs/s with reservations) is measured apart.
 */
const WEB_PORT = 3963;
const PHASE_S = Number(process.env.BENCH_PHASE_S ?? 10);
const HISTORY_CLIENTS = 2;
const STALLED_UPLOADS = 50;
const ANNOUNCED_UPLOAD_BYTES = 5_000_000;
const UNAUTHENTICATED_CLIENTS = 20;
const UNAUTHENTICATED_BYTES = 20 * 1024 * 1024;
const MB = 1024 * 1024;

const TICKS_PER_SECOND = 100;
/** CPU seconds of a process's main thread (its event loop): /proc/PID/task/PID/stat. */
function mainThreadSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

interface Row {
  phase: string;
  probes: number;
  p50: number;
  p99: number;
  max: number;
  webCpu: number;
  mainCpu: number;
  answers: string;
}

const seconds = (s: number) => new Promise<void>((resolve) => setTimeout(resolve, s * 1000));

/** Probes /healthz while `load` runs (it gets a deadline and resolves when its clients have stopped). */
async function phase(phaseName: string, url: string, web: ChildProcess, load: (until: number) => Promise<string>): Promise<Row> {
  const cpu = cpuSeconds(web.pid!);
  const main = mainThreadSeconds(web.pid!);
  let answers = '';
  const loading = load(performance.now() + PHASE_S * 1000).then((summary) => (answers = summary));
  const samples = await sampleHealthz(url, loading);
  return {
    phase: phaseName,
    probes: samples.length,
    p50: round(percentile(samples, 50), 1),
    p99: round(percentile(samples, 99), 1),
    max: round(Math.max(...samples), 1),
    webCpu: round(cpuSeconds(web.pid!) - cpu),
    mainCpu: round(mainThreadSeconds(web.pid!) - main),
    answers,
  };
}

/** `clients` loops sending `send` until the deadline; a tally of the statuses they got. */
async function loop(clients: number, until: number, send: () => Promise<number>): Promise<string> {
  const statuses = new Map<string, number>();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const status = await send().then(String, (err: NodeJS.ErrnoException) => err.code ?? 'error');
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  return [...statuses].map(([status, count]) => `${count}× ${status}`).join(', ');
}

/** An upload that sends its multipart head and 1 KB of a PNG of `ANNOUNCED_UPLOAD_BYTES`, then nothing more. */
function stalledUpload(port: number, key: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      const boundary = 'trustbenchboundary';
      const png = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(1024 - 16, 7)]);
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`;
      socket.write(
        `POST /api/files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${ANNOUNCED_UPLOAD_BYTES}\r\n\r\n`,
      );
      socket.write(Buffer.concat([Buffer.from(head), png]), () => resolve(socket));
    });
    socket.on('error', reject);
  });
}

export async function run() {
  const started: ChildProcess[] = [];
  const bench = await benchEnvironment('trust');
  try {
    const env = { ...bench.env, PORT: String(WEB_PORT), LOG_LEVEL: 'info', LOCAL_MODEL_TOKEN_DELAY_MS: '0' };
    const web = await spawnProcess('../src/server.js', env, /web listening/);
    started.push(web);
    started.push(await spawnProcess('../workers/main.js', env, /worker ready/));
    const url = `http://127.0.0.1:${WEB_PORT}`;
    const { key } = await bench.user('trust@example.test');
    const history = longHistoryBody();
    const unauthenticated = Buffer.alloc(UNAUTHENTICATED_BYTES, 0x20);
    const json = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    // Warm-up: JIT, connections, the CPU pool's threads and their tokenizers.
    await sampleHealthz(url, exchange(url, { method: 'POST', path: '/v1/chat/completions', headers: json, body: history }));

    const rows: Row[] = [];
    rows.push(await phase('quiet', url, web, async () => {
      await seconds(PHASE_S);
      return '';
    }));
    rows.push(await phase(`(a) ${HISTORY_CLIENTS} clients posting a ${round(history.length / MB, 1)} MB /v1 history`, url, web, (until) =>
      loop(HISTORY_CLIENTS, until, async () => (await exchange(url, { method: 'POST', path: '/v1/chat/completions', headers: json, body: history })).status),
    ));
    const uploaders = await Promise.all(Array.from({ length: STALLED_UPLOADS }, (_, i) => bench.user(`uploader-${i}@example.test`)));
    rows.push(await phase(`(b) ${STALLED_UPLOADS} stalled uploads (5 MB announced, 1 KB sent)`, url, web, async () => {
      const sockets = await Promise.all(uploaders.map(({ key: uploaderKey }) => stalledUpload(WEB_PORT, uploaderKey)));
      await seconds(PHASE_S);
      const open = sockets.filter((socket) => !socket.destroyed && socket.readable).length;
      for (const socket of sockets) socket.destroy();
      return `${open} of ${STALLED_UPLOADS} still open at the end`;
    }));
    rows.push(await phase(`(c) ${UNAUTHENTICATED_CLIENTS} clients posting 20 MB to /v1 without a credential`, url, web, (until) =>
      loop(UNAUTHENTICATED_CLIENTS, until, async () => (await exchange(url, { method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: unauthenticated })).status),
    ));
    console.log(`\nGET /healthz every 10 ms, ${PHASE_S} s per phase (ms; CPU seconds of the web in the phase)`);
    console.table(rows.map((r) => ({ phase: r.phase, probes: r.probes, 'p50 ms': r.p50, 'p99 ms': r.p99, 'max ms': r.max, 'web CPU s': r.webCpu, 'event loop CPU s': r.mainCpu, answers: r.answers })));
  } finally {
    for (const child of started.reverse()) await stop(child);
    await bench.drop();
  }
  // Budgets (DESIGN §21): overshoot against the largest single call, and runs/s with reservations on and off.
  await budgetFigures();
}
