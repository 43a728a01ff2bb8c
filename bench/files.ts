import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { benchEnvironment, percentile, readEvents, round, spawnProcess, stop } from './support.js';

/**
 * Files and images (DESIGN §15), each figure against a baseline measured in the same run:
 * (1) uploads of a 2 MB JPEG, p50 and MB/s, against a plain JSON request of the same route family
 *     (GET /api/files/{id}); (2) first-token p50 of a run with one 2 MB image through a local
 *     gateway (its own process) against the same run without it, for an image within
 *     IMAGE_MAX_SIDE (sent as uploaded) and one past it (its model copy, made at upload) — target:
 *     ≤ 30 ms more; (3) peak RSS of a worker downscaling 10 large images at once (its IMAGE_MAX_SIDE
 *     differs from the uploads' copies, so it must) and of the web taking 10 large uploads at once,
 *     each against the same process idle.
 */
const WEB_PORT = 3960;
const GATEWAY_PORT = 3961;
const UPLOADS = 40;
const JSON_READS = 200;
const RUNS = 60;
const WARM_UP = 8;
const LARGE = 10;

const MB = 1024 * 1024;

/** A photograph-like JPEG (noise) of `width` × 2/3 of it, at the highest quality that keeps it within `target` bytes. */
async function photoOf(target: number, width: number): Promise<Buffer> {
  const height = Math.round((width * 2) / 3);
  const pixels = sharp({ create: { width, height, channels: 3, background: 'black', noise: { type: 'gaussian', mean: 128, sigma: 30 } } }).blur(0.8);
  const raw = await pixels.raw().toBuffer({ resolveWithObject: true });
  for (let quality = 98; ; quality -= 2) {
    const bytes = await sharp(raw.data, { raw: raw.info }).jpeg({ quality }).toBuffer();
    if (bytes.length <= target || quality <= 10) return bytes;
  }
}

/** Peak resident set of a process since it started (Linux VmHWM), and now (VmRSS), in MB. */
async function memoryOf(pid: number): Promise<{ peak: number; now: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { peak: kb('VmHWM') / 1024, now: kb('VmRSS') / 1024 };
}

/** Resets VmHWM to the current RSS (Linux: write 5 to clear_refs), so the next peak is this phase's own. */
async function resetPeak(pid: number): Promise<void> {
  const { writeFile } = await import('node:fs/promises');
  await writeFile(`/proc/${pid}/clear_refs`, '5');
}

export async function run() {
  const started: ChildProcess[] = [];
  const bench = await benchEnvironment('files');
  try {
    started.push(await spawnProcess('./stream-gateway.js', {}, /gateway listening/, [String(GATEWAY_PORT)]));
    const env = {
      ...bench.env,
      PORT: String(WEB_PORT),
      LOG_LEVEL: 'info',
      RUNS_PER_USER_LIMIT: '100000',
      GATEWAY_URL: `http://127.0.0.1:${GATEWAY_PORT}`,
      GATEWAY_API_KEY: 'bench',
      FILE_QUOTA_BYTES: String(100 * 1024 * MB),
    };
    const web = await spawnProcess('../src/server.js', env, /web listening/);
    started.push(web);
    const worker = await spawnProcess('../workers/main.js', env, /worker ready/);
    started.push(worker);
    const url = `http://127.0.0.1:${WEB_PORT}`;
    const { key } = await bench.user('bench@example.test');
    const auth = { authorization: `Bearer ${key}` };

    let busyAnswers = 0;
    /** Uploads, waiting out 429s (the web bounds uploads in progress) as a client should. */
    const upload = async (bytes: Buffer, name: string): Promise<{ id: string; width: number; height: number; size_bytes: number }> => {
      for (;;) {
        const form = new FormData();
        form.append('file', new Blob([new Uint8Array(bytes)]), name);
        const res = await fetch(`${url}/api/files`, { method: 'POST', headers: auth, body: form });
        if (res.status === 429) {
          busyAnswers++;
          await res.text();
          await new Promise((resolve) => setTimeout(resolve, 1000 * Number(res.headers.get('retry-after') ?? 1)));
          continue;
        }
        if (res.status !== 201) throw new Error(`upload ${res.status}: ${await res.text()}`);
        return res.json() as Promise<{ id: string; width: number; height: number; size_bytes: number }>;
      }
    };
    const timed = async (work: () => Promise<unknown>) => {
      const t = performance.now();
      await work();
      return performance.now() - t;
    };

    // Within IMAGE_MAX_SIDE (2048): sent as uploaded. Past it: its model copy, made at upload.
    const within = await photoOf(2 * MB, 2048);
    const past = await photoOf(2 * MB, 3000);
    const [withinMeta, pastMeta] = [await sharp(within).metadata(), await sharp(past).metadata()];
    console.log(`\nfiles benchmark: images ${withinMeta.width}×${withinMeta.height} (${round(within.length / MB)} MB) and ${pastMeta.width}×${pastMeta.height} (${round(past.length / MB)} MB)`);

    // (1) Uploads against a JSON read of the same family.
    const first = await upload(within, 'warm.jpg');
    for (let i = 0; i < WARM_UP; i++) await upload(within, 'warm.jpg');
    const uploadMs: Record<string, number[]> = { within: [], past: [] };
    for (let i = 0; i < UPLOADS; i++) {
      uploadMs.within!.push(await timed(() => upload(within, 'within.jpg')));
      uploadMs.past!.push(await timed(() => upload(past, 'past.jpg')));
    }
    const jsonMs: number[] = [];
    for (let i = 0; i < JSON_READS; i++) jsonMs.push(await timed(async () => (await fetch(`${url}/api/files/${first.id}`, { headers: auth })).text()));
    const concurrent = async (bytes: Buffer, clients: number, rounds: number) => {
      const t = performance.now();
      await Promise.all(Array.from({ length: clients }, async () => {
        for (let i = 0; i < rounds; i++) await upload(bytes, 'c.jpg');
      }));
      return (clients * rounds * bytes.length) / MB / ((performance.now() - t) / 1000);
    };
    const p50 = (values: number[]) => percentile(values, 50);
    console.log('\n(1) uploads (sequential) against GET /api/files/{id}:');
    console.table({
      'GET /api/files/{id} (JSON)': { 'p50 ms': round(p50(jsonMs)), 'p99 ms': round(percentile(jsonMs, 99)), 'MB/s': '' },
      'upload 2 MB JPEG within IMAGE_MAX_SIDE': { 'p50 ms': round(p50(uploadMs.within!)), 'p99 ms': round(percentile(uploadMs.within!, 99)), 'MB/s': round(within.length / MB / (p50(uploadMs.within!) / 1000), 1) },
      'upload 2 MB JPEG past IMAGE_MAX_SIDE (model copy made)': { 'p50 ms': round(p50(uploadMs.past!)), 'p99 ms': round(percentile(uploadMs.past!, 99)), 'MB/s': round(past.length / MB / (p50(uploadMs.past!) / 1000), 1) },
    });
    console.log(`upload p50 / JSON p50: within ${round(p50(uploadMs.within!) / p50(jsonMs), 1)}×, past ${round(p50(uploadMs.past!) / p50(jsonMs), 1)}×`);
    console.log(`throughput, 4 clients: within ${round(await concurrent(within, 4, 5), 1)} MB/s, past ${round(await concurrent(past, 4, 5), 1)} MB/s`);

    // (2) First token with and without an image, alternating so drift falls on all alike.
    const agent = await fetch(`${url}/api/agents`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'vision', model: 'bench-model' }) });
    const agentId = ((await agent.json()) as { id: string }).id;
    const [withinFile, pastFile] = [await upload(within, 'within.jpg'), await upload(past, 'past.jpg')];
    const firstToken = async (imageIds?: string) => {
      const t = performance.now();
      let at = NaN;
      const res = await fetch(`${url}/api/react`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ q: 'What is in the picture?', agent_id: agentId, ...(imageIds ? { image_ids: imageIds } : {}) }) });
      let done = false;
      await readEvents(res, ({ event }) => {
        if (event === 'token' && Number.isNaN(at)) at = performance.now() - t;
        done ||= event === 'done';
      });
      if (!done || Number.isNaN(at)) throw new Error('run ended early');
      return at;
    };
    const cases = { 'no image': undefined, 'one 2 MB image within IMAGE_MAX_SIDE': withinFile.id, 'one 2 MB image past IMAGE_MAX_SIDE': pastFile.id } as const;
    const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, [] as number[]])) as Record<keyof typeof cases, number[]>;
    for (let i = 0; i < WARM_UP; i++) for (const id of Object.values(cases)) await firstToken(id);
    for (let i = 0; i < RUNS; i++) {
      const order = Object.entries(cases) as [keyof typeof cases, string | undefined][];
      if (i % 2) order.reverse();
      for (const [label, id] of order) samples[label].push(await firstToken(id));
    }
    console.log(`\n(2) first token through a local gateway (chat format), ${RUNS} runs each:`);
    console.table(Object.fromEntries(Object.entries(samples).map(([label, values]) => [label, { 'p50 ms': round(p50(values)), 'p99 ms': round(percentile(values, 99)), 'p50 − no image, ms': round(p50(values) - p50(samples['no image'])) }])));
    for (const label of ['one 2 MB image within IMAGE_MAX_SIDE', 'one 2 MB image past IMAGE_MAX_SIDE'] as const) {
      console.log(`${label}: +${round(p50(samples[label]) - p50(samples['no image']))} ms first-token p50 (target ≤ 30)`);
    }

    // (3) Peak memory: 10 large images downscaled at once by a worker, and uploaded at once to the web.
    const large = await photoOf(8 * MB, 6000);
    const busyBefore = busyAnswers;
    const largeMeta = await sharp(large).metadata();
    await resetPeak(web.pid!);
    const webIdle = await memoryOf(web.pid!);
    const largeFiles = await Promise.all(Array.from({ length: LARGE }, (_, i) => upload(large, `large-${i}.jpg`)));
    const webPeak = await memoryOf(web.pid!);
    // A worker of its own whose IMAGE_MAX_SIDE the uploads' copies were not made for: it downscales every original.
    await stop(worker);
    const resizing = await spawnProcess('../workers/main.js', { ...env, IMAGE_MAX_SIDE: '1024' }, /worker ready/);
    started.push(resizing);
    await firstToken(withinFile.id);
    await resetPeak(resizing.pid!);
    const workerIdle = await memoryOf(resizing.pid!);
    const t = performance.now();
    await firstToken(largeFiles.map((f) => f.id).join(','));
    const workerMs = performance.now() - t;
    const workerPeak = await memoryOf(resizing.pid!);
    console.log(`\n(3) peak RSS, ${LARGE} images of ${largeMeta.width}×${largeMeta.height} (${round(large.length / MB, 1)} MB each) at once:`);
    console.table({
      'web: 10 uploads at once (model copies made)': { 'idle MB': round(webIdle.now, 1), 'peak MB': round(webPeak.peak, 1), 'peak − idle MB': round(webPeak.peak - webIdle.now, 1) },
      'worker: one run with 10 images, each downscaled': { 'idle MB': round(workerIdle.now, 1), 'peak MB': round(workerPeak.peak, 1), 'peak − idle MB': round(workerPeak.peak - workerIdle.now, 1) },
    });
    console.log(`web: ${busyAnswers - busyBefore} of those uploads were answered 429 (more than 4 × IMAGE_CONCURRENCY in progress) and sent again after Retry-After`);
    console.log(`worker: first token of that run ${round(workerMs)} ms (10 downscales at IMAGE_CONCURRENCY 2)`);
  } finally {
    await Promise.all(started.map(stop));
    await bench.drop();
  }
}
