import type { ChildProcess } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type Page } from 'playwright-core';
import { benchEnvironment, percentile, round, spawnProcess, stop } from './support.js';

/**
 * The console (DESIGN §17) in Debian's Chromium, against one web and one worker process.
 *
 * 1. Bytes on first load: every script and style the browser fetched (gzip, level 6 as a proxy
 *    would send it), for the sign-in page and then the chat screen after signing in; /docs
 *    (Swagger UI, the other page the web serves) beside it.
 * 2. Time to interactive, cold (a fresh browser context each time, so nothing is cached), /console
 *    and /docs alternated in the same run: from navigation start until the page answers input —
 *    the console's sign-in form is rendered (#app[data-ready]), Swagger UI's operations are listed.
 * 3. Memory of a page that streamed 100 runs through the chat screen: the JS heap after a forced
 *    GC and the DOM node count, after sign-in, after 10 runs, at the chat's bound (60) and after 100.
 *
 * BENCH_QUICK=1: 3 loads per page and 20 runs (a smoke run).
 */
const PORT = 3971;
const QUICK = process.env.BENCH_QUICK === '1';
const LOADS = QUICK ? 3 : 15;
const RUNS = QUICK ? 20 : 100;
/** The chat keeps this many entries (src/console/screens/chat/transcript.ts MAX_ENTRIES): past it, the page should stop growing. */
const CHAT_BOUND = 60;
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

interface Loaded {
  /** gzip bytes of the scripts and styles fetched, by kind. */
  js: number;
  css: number;
  files: number;
  interactiveMs: number;
}

/** Opens `path` in a fresh context, waits until `ready` is on the page, and sums what it fetched. */
async function load(browser: Browser, url: string, path: string, ready: string, then?: (page: Page) => Promise<void>): Promise<Loaded> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const bodies: Promise<{ kind: 'js' | 'css'; bytes: number } | undefined>[] = [];
  page.on('response', (res) => {
    const type = res.request().resourceType();
    if (type !== 'script' && type !== 'stylesheet') return;
    bodies.push(res.body().then((body) => ({ kind: type === 'script' ? 'js' : 'css', bytes: gzipSync(body, { level: 6 }).length }), () => undefined));
  });
  await page.goto(`${url}${path}`);
  await page.waitForSelector(ready);
  const interactiveMs = await page.evaluate(() => performance.now());
  if (then) await then(page);
  const fetched = (await Promise.all(bodies)).filter((b) => b !== undefined);
  await context.close();
  const sum = (kind: 'js' | 'css') => fetched.filter((b) => b.kind === kind).reduce((n, b) => n + b.bytes, 0);
  return { js: sum('js'), css: sum('css'), files: fetched.length, interactiveMs };
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Console' }).waitFor();
}

/** Asks one question in the chat screen and waits until its run (a new one, last in the transcript) is done. */
async function chatRun(page: Page, question: string): Promise<void> {
  const lastRun = () => page.evaluate(() => [...document.querySelectorAll('article.run')].at(-1)?.getAttribute('data-run-id') ?? '');
  const before = await lastRun();
  await page.getByLabel('Message', { exact: true }).fill(question);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForFunction(
    (previous) => {
      const run = [...document.querySelectorAll('article.run')].at(-1);
      return !!run && run.getAttribute('data-run-id') !== previous && !!run.getAttribute('data-run-id') && run.getAttribute('aria-busy') === 'false';
    },
    before,
    { timeout: 30_000 },
  );
}

async function pageMemory(page: Page): Promise<{ heapKiB: number; nodes: number }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('Performance.enable');
  const { metrics } = await cdp.send('Performance.getMetrics');
  await cdp.detach();
  const metric = (name: string) => metrics.find((m) => m.name === name)?.value ?? NaN;
  return { heapKiB: round(metric('JSHeapUsedSize') / 1024, 0), nodes: metric('Nodes') };
}

const kib = (bytes: number) => `${round(bytes / 1024, 1)} KiB`;

export async function run(): Promise<void> {
  const bench = await benchEnvironment('console');
  const env = { ...bench.env, PORT: String(PORT), LOCAL_MODEL_TOKEN_DELAY_MS: '0', RUNS_PER_USER_LIMIT: '1000' };
  const children: ChildProcess[] = [];
  let browser: Browser | undefined;
  try {
    children.push(await spawnProcess('../src/server.js', env, /web listening/));
    children.push(await spawnProcess('../workers/main.js', env, /worker ready/));
    const url = `http://127.0.0.1:${PORT}`;
    const { user } = await bench.user('console-bench@example.test');
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });

    // 1 and 2: cold loads, alternated.
    const consoleLoads: Loaded[] = [];
    const docsLoads: Loaded[] = [];
    for (let i = 0; i < LOADS; i++) {
      consoleLoads.push(await load(browser, url, '/console', '#app[data-ready="true"] form'));
      docsLoads.push(await load(browser, url, '/docs', '.opblock'));
    }
    const signedIn = await load(browser, url, '/console', '#app[data-ready="true"] form', async (page) => {
      await signIn(page, user.email, 'bench-password');
      await page.getByLabel('Message', { exact: true }).waitFor();
    });
    const first = consoleLoads[0]!;
    const docs = docsLoads[0]!;
    const tti = (loads: Loaded[], p: number) => round(percentile(loads.map((l) => l.interactiveMs), p), 1);

    // 3: one page, RUNS runs through the chat screen.
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${url}/console`);
    await page.waitForSelector('#app[data-ready="true"] form');
    await signIn(page, user.email, 'bench-password');
    await page.getByLabel('Message', { exact: true }).waitFor();
    const memory = [{ runs: 0, ...(await pageMemory(page)) }];
    const runStarted = performance.now();
    for (let i = 1; i <= RUNS; i++) {
      await chatRun(page, `What is ${i}*7?`);
      if (i === 10 || i === CHAT_BOUND || i === RUNS) memory.push({ runs: i, ...(await pageMemory(page)) });
    }
    const runSeconds = (performance.now() - runStarted) / 1000;
    await context.close();

    const [start, ten, last] = [memory[0]!, memory[1]!, memory[memory.length - 1]!];
    const atBound = memory.find((m) => m.runs === CHAT_BOUND);
    console.log(`\nconsole benchmark${QUICK ? ' (BENCH_QUICK=1: a smoke run)' : ''}: Debian chromium, ${LOADS} cold loads per page alternated, ${RUNS} runs streamed in one page\n`);
    console.log('1. bytes on first load (gzip level 6)');
    console.log(`   console, sign-in page:        JS ${kib(first.js)} + CSS ${kib(first.css)} = ${kib(first.js + first.css)} in ${first.files} files`);
    console.log(`   console, signed in to chat:   JS ${kib(signedIn.js)} + CSS ${kib(signedIn.css)} = ${kib(signedIn.js + signedIn.css)} in ${signedIn.files} files`);
    console.log(`   /docs (Swagger UI):           JS ${kib(docs.js)} + CSS ${kib(docs.css)} = ${kib(docs.js + docs.css)} in ${docs.files} files`);
    console.log(`   console / docs:               ${round((signedIn.js + signedIn.css) / (docs.js + docs.css), 3)}`);
    console.log('2. time to interactive, cold (ms from navigation start)');
    console.log(`   console: p50 ${tti(consoleLoads, 50)}  p90 ${tti(consoleLoads, 90)}`);
    console.log(`   /docs:   p50 ${tti(docsLoads, 50)}  p90 ${tti(docsLoads, 90)}`);
    console.log(`   console / docs (p50): ${round(tti(consoleLoads, 50) / tti(docsLoads, 50), 3)}`);
    console.log(`3. memory of one page streaming ${RUNS} runs (${round(runSeconds, 1)} s, ${round(RUNS / runSeconds, 1)} runs/s through the UI)`);
    for (const m of memory) console.log(`   after ${String(m.runs).padStart(3)} runs: JS heap ${m.heapKiB} KiB, ${m.nodes} DOM nodes`);
    console.log(`   growth per run, 10 → ${RUNS}: ${round((last.heapKiB - ten.heapKiB) / (RUNS - 10), 2)} KiB heap, ${round((last.nodes - ten.nodes) / (RUNS - 10), 1)} DOM nodes`);
    if (atBound) console.log(`   growth per run past the chat's bound, ${CHAT_BOUND} → ${RUNS}: ${round((last.heapKiB - atBound.heapKiB) / (RUNS - CHAT_BOUND), 2)} KiB heap, ${round((last.nodes - atBound.nodes) / (RUNS - CHAT_BOUND), 1)} DOM nodes`);
    console.log(`   heap after ${RUNS} runs / after sign-in: ${round(last.heapKiB / start.heapKiB, 2)}`);
  } finally {
    await browser?.close();
    await Promise.all(children.map(stop));
    await bench.drop();
  }
}
