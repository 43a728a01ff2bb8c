import net from 'node:net';
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { benchEnvironment, percentile, round, spawnProcess, stop } from './support.js';
import { cpuSeconds } from './cpu.js';
import { exchange, longHistoryBody, loop, probeAgent, sampleHealthz, sampleLatency } from './hostile.js';
import { budgetFigures } from './trust-budgets.js';
import { printProfiles } from './profile-summary.js';
import { QUICK, settle, structuredCostFigures, surfaceLoads, type HostileLoad } from './trust-surfaces.js';

/**
 * Promises under shared use (DESIGN §21, issues 32 and 44), the latency half: GET /healthz of the
 * web and of the worker's metrics port (WORKER_METRICS_PORT), each asked every 10 ms (open loop),
 * quiet and while hostile requests are in flight, on one web + one worker:
 *
 * a 24 MB /v1 history (240 turns of 99,000 characters, each past the local model's window),
 * posted again and again by 2 clients; 50 uploads (50 users) that send a multipart head and
 * 1 KB of a PNG announcing 5 MB, then stall; 20 clients posting 20 MB bodies to /v1 without a
 * credential; and issue 44's inputs (bench/trust-surfaces.ts): output schemas whose work grows
 * past their bytes (a $ref fan-out on the web, an allOf/$ref chain and a backtracking pattern on
 * the worker), 10 MB CSV and JSONL dataset uploads, a JSONL line nested 300,000 deep. Each phase
 * shows the statuses its requests got and the web's CPU: all threads, and its event loop's (main)
 * thread alone. Target (DESIGN §21): p99 ≤ 100 ms in every phase, on both.
 * Then runs/s with a 2 KB output schema against none, and the budget half of `trust` (overshoot,
 * runs/s with reservations), each on processes of their own.
 * BENCH_PHASE_S (default 10) per phase; BENCH_QUICK=1: 3 s phases and shorter rounds;
 * BENCH_PHASES=history,(c): only the phases whose names contain one of these (and quiet);
 * BENCH_CPU_PROF=<dir>: the web and the worker write CPU profiles there, summarized at the end.
 */
const WEB_PORT = 3963;
const WORKER_METRICS_PORT = 3964;
const PHASE_S = Number(process.env.BENCH_PHASE_S ?? (QUICK ? 3 : 10));
/** How long a phase's leftover runs may take before the next phase starts anyway. */
const SETTLE_S = QUICK ? 20 : 60;
const ONLY = process.env.BENCH_PHASES?.split(',').filter(Boolean);
const chosen = ({ name }: HostileLoad) => name === 'quiet' || !ONLY || ONLY.some((part) => name.includes(part));
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
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

interface Latency {
  probes: number;
  p50: number;
  p99: number;
  max: number;
}

const latencyOf = (samples: number[]): Latency => ({ probes: samples.length, p50: round(percentile(samples, 50), 1), p99: round(percentile(samples, 99), 1), max: round(Math.max(...samples), 1) });

interface Row {
  phase: string;
  web: Latency;
  worker: Latency;
  webCpu: number;
  mainCpu: number;
  answers: string;
}

const seconds = (s: number) => new Promise<void>((resolve) => setTimeout(resolve, s * 1000));

interface Probed {
  web: ChildProcess;
  webUrl: string;
  workerUrl: string;
  bench: Awaited<ReturnType<typeof benchEnvironment>>;
}

/** The worker's metrics port serves /metrics only: any answer of its (a 404 for /healthz) times its event loop. */
const anyAnswer = (status: number) => status > 0 && status < 500;

/** Probes both /healthz while `load` runs (it gets a deadline and resolves when its clients have stopped), then lets the runs it left settle. */
async function phase(phaseName: string, { web, webUrl, workerUrl, bench }: Probed, load: HostileLoad['load']): Promise<Row> {
  const cpu = cpuSeconds(web.pid!);
  const main = mainThreadSeconds(web.pid!);
  let answers = '';
  const loading = load(performance.now() + PHASE_S * 1000).then((summary) => (answers = summary));
  const [webSamples, workerSamples] = await Promise.all([sampleHealthz(webUrl, loading), sampleLatency(workerUrl, '/healthz', loading, probeAgent(), anyAnswer)]);
  const row = { phase: phaseName, web: latencyOf(webSamples), worker: latencyOf(workerSamples), webCpu: round(cpuSeconds(web.pid!) - cpu), mainCpu: round(mainThreadSeconds(web.pid!) - main), answers };
  row.answers += await settle(bench, SETTLE_S);
  return row;
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
  const profiled: Record<string, number> = {};
  const bench = await benchEnvironment('trust');
  try {
    const env = { ...bench.env, PORT: String(WEB_PORT), LOG_LEVEL: 'info', LOCAL_MODEL_TOKEN_DELAY_MS: '0', METRICS_ENABLED: 'true', WORKER_METRICS_PORT: String(WORKER_METRICS_PORT) };
    const profile = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
    const web = await spawnProcess('../src/server.js', env, /web listening/, [], profile);
    started.push(web);
    const worker = await spawnProcess('../workers/main.js', env, /worker ready/, [], profile);
    started.push(worker);
    Object.assign(profiled, { web: web.pid!, worker: worker.pid! });
    const url = `http://127.0.0.1:${WEB_PORT}`;
    const probed = { web, webUrl: url, workerUrl: `http://127.0.0.1:${WORKER_METRICS_PORT}`, bench };
    const { key } = await bench.user('trust@example.test');
    const history = longHistoryBody();
    const unauthenticated = Buffer.alloc(UNAUTHENTICATED_BYTES, 0x20);
    const json = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    // Warm-up: JIT, connections, the CPU pool's threads and their tokenizers.
    await sampleHealthz(url, exchange(url, { method: 'POST', path: '/v1/chat/completions', headers: json, body: history }));

    const uploaders = await Promise.all(Array.from({ length: STALLED_UPLOADS }, (_, i) => bench.user(`uploader-${i}@example.test`)));
    const loads: HostileLoad[] = [
      { name: 'quiet', load: () => seconds(PHASE_S).then(() => '') },
      {
        name: `${HISTORY_CLIENTS} clients posting a ${round(history.length / MB, 1)} MB /v1 history`,
        load: (until) => loop(HISTORY_CLIENTS, until, async () => (await exchange(url, { method: 'POST', path: '/v1/chat/completions', headers: json, body: history })).status),
      },
      {
        name: `${STALLED_UPLOADS} stalled uploads (5 MB announced, 1 KB sent)`,
        load: async () => {
          const sockets = await Promise.all(uploaders.map(({ key: uploaderKey }) => stalledUpload(WEB_PORT, uploaderKey)));
          await seconds(PHASE_S);
          const open = sockets.filter((socket) => !socket.destroyed && socket.readable).length;
          for (const socket of sockets) socket.destroy();
          return `${open} of ${STALLED_UPLOADS} still open at the end`;
        },
      },
      {
        name: `${UNAUTHENTICATED_CLIENTS} clients posting 20 MB to /v1 without a credential`,
        load: (until) => loop(UNAUTHENTICATED_CLIENTS, until, async () => (await exchange(url, { method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: unauthenticated })).status),
      },
      ...(await surfaceLoads(url, bench)),
    ];
    const rows: Row[] = [];
    for (const { name, load } of loads.filter(chosen)) {
      const row = await phase(name, probed, load);
      console.log(`${name}: web p99 ${row.web.p99} ms, worker p99 ${row.worker.p99} ms; ${row.answers}`);
      rows.push(row);
    }
    console.log(`\nGET /healthz every 10 ms on the web and on the worker's metrics port, ${PHASE_S} s per phase (ms; CPU seconds of the web in the phase)`);
    console.table(
      rows.map((r) => ({
        phase: r.phase,
        probes: r.web.probes,
        'web p50': r.web.p50,
        'web p99': r.web.p99,
        'web max': r.web.max,
        'worker p50': r.worker.p50,
        'worker p99': r.worker.p99,
        'worker max': r.worker.max,
        'web CPU s': r.webCpu,
        'event loop CPU s': r.mainCpu,
        answers: r.answers,
      })),
    );
  } finally {
    for (const child of started.reverse()) await stop(child);
    await bench.drop();
  }
  if (PROFILE_DIR) printProfiles(PROFILE_DIR, profiled);
  if (ONLY) return;
  // Structured outputs (DESIGN §23): runs/s with a 2 KB output schema against none.
  await structuredCostFigures();
  // Budgets (DESIGN §21): overshoot against the largest single call, and runs/s with reservations on and off.
  await budgetFigures();
}
