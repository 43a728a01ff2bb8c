import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumInstalled } from './support/chromium.js';
import { startStack, type Stack } from './support/stack.js';
import { servePage } from './support/stream-page.js';

/**
 * DESIGN §12 in a real headless Chromium: a browser app on another origin (listed in
 * CORS_ORIGINS) streams a run with fetch and an API key, shows tokens as they arrive, drops the
 * connection mid-run and resumes with Last-Event-ID, and cancels a run; a page on an origin that
 * is not listed is refused by the browser. Built web and worker processes, real Redis and Postgres.
 */
let stack: Stack;
let app: Awaited<ReturnType<typeof servePage>>;
let foreign: Awaited<ReturnType<typeof servePage>>;
let browser: Awaited<ReturnType<typeof import('./support/browser.js').headlessChromium>>;

/** Long enough to drop or cancel mid-answer: the local model answers word by word, this many ms apart. */
const TOKEN_DELAY_MS = '40';
const QUESTION = 'Please explain in a few words how a page on one origin can stream server-sent events from an API on another origin';

beforeAll(async () => {
  if (!chromiumInstalled) return;
  [app, foreign] = await Promise.all([servePage(), servePage()]);
  stack = await startStack({ env: { CORS_ORIGINS: app.origin, LOCAL_MODEL_TOKEN_DELAY_MS: TOKEN_DELAY_MS } });
  const { headlessChromium } = await import('./support/browser.js');
  browser = await headlessChromium();
}, 90_000);
afterAll(async () => {
  if (!chromiumInstalled) return;
  await browser.close();
  await stack.stop();
  await Promise.all([app.close(), foreign.close()]);
});

async function openPage(origin: string): Promise<{ page: Page; messages: string[] }> {
  const page = await browser.context.newPage();
  const messages: string[] = [];
  page.on('console', (message) => messages.push(message.text()));
  await page.goto(`${origin}/`);
  return { page, messages };
}

describe.skipIf(!chromiumInstalled)('a browser app on another origin', () => {
  it('streams a run, shows tokens as they arrive, drops mid-run and resumes with Last-Event-ID, ending with the answer once', { timeout: 60_000 }, async () => {
    const { key, user } = await stack.user();
    const { page } = await openPage(app.origin);
    await page.evaluate((args) => {
      (window as any).result = (window as any).app.streamAndResume(args);
    }, { api: stack.url, key, q: QUESTION, dropAfterTokens: 3 });
    // Tokens are in the DOM while the run is still streaming, not only at the end.
    await page.waitForFunction(() => document.getElementById('answer')!.children.length > 0 && !document.getElementById('status')!.textContent!.startsWith('done'));
    const result = await page.evaluate(() => (window as any).result);

    expect(result.status).toBe(200);
    // The exposed headers are readable by the page's script.
    expect(result.runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.conversationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.requestId).toBeTruthy();
    // Dropped mid-run: after the third token, before the end.
    expect(result.droppedAfter.tokens).toBe(3);
    expect(result.droppedAfter.done).toBeUndefined();
    expect(result.resumedStatus).toBe(200);
    // Resumed after the last event seen: every event once, the rest of the tokens, one done.
    const ids = result.seen.map((e: { id: string }) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(result.seen.filter((e: { type: string }) => e.type === 'token').length).toBeGreaterThan(3);
    expect(result.seen.filter((e: { type: string }) => e.type === 'done')).toHaveLength(1);
    expect(result.seen.at(-1).type).toBe('done');
    expect(result.done).toBe('succeeded');
    // The DOM holds the complete answer exactly once.
    expect(result.answer).toContain(QUESTION);
    expect(result.shown).toBe(result.answer);
    expect(await page.textContent('#answer')).toBe(result.answer);
    expect(await page.textContent('#status')).toBe('done: succeeded');
    const run = await stack.identity.models.Run.query().findById(result.runId);
    expect(run).toMatchObject({ user_id: user.id, status: 'succeeded' });
    await page.close();
  });

  it('cancels a run it is streaming', { timeout: 60_000 }, async () => {
    const { key } = await stack.user();
    const { page } = await openPage(app.origin);
    const result = await page.evaluate((args) => (window as any).app.startAndCancel(args), { api: stack.url, key, q: QUESTION });
    expect(result.cancel).toEqual({ status: 202, body: { run_id: result.runId, status: 'cancelling' } });
    expect(result.done).toBe('cancelled');
    expect(result.types.at(-1)).toBe('done');
    expect(result.types).not.toContain('answer');
    const run = await stack.identity.models.Run.query().findById(result.runId);
    expect(run!.status).toBe('cancelled');
    await page.close();
  });

  it('a page on an origin not in CORS_ORIGINS is refused by the browser; nothing is started', { timeout: 60_000 }, async () => {
    const { key, user } = await stack.user();
    const { page, messages } = await openPage(foreign.origin);
    const refused = await page.evaluate((args) => (window as any).app.attempt(args), { api: stack.url, key });
    expect(refused).toEqual({ stream: 'TypeError: Failed to fetch', simpleGet: 'TypeError: Failed to fetch' });
    // The browser says why: the CORS policy, not the network.
    expect(messages.filter((line) => /blocked by CORS policy/.test(line)).length).toBeGreaterThanOrEqual(2);
    // The stream needed a preflight, which failed: the POST was never sent.
    expect(await stack.identity.models.Run.query().where({ user_id: user.id }).resultSize()).toBe(0);
    await page.close();

    // The listed origin, same calls, same browser: allowed.
    const { page: allowedPage } = await openPage(app.origin);
    const allowed = await allowedPage.evaluate((args) => (window as any).app.attempt(args), { api: stack.url, key });
    expect(allowed).toEqual({ stream: 'ok 200', simpleGet: 'ok 200' });
    await allowedPage.close();
  });
});
