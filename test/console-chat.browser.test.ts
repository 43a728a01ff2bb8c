import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumInstalled } from './support/chromium.js';
import { startStack, type Stack } from './support/stack.js';
import { expectSelfContained, openConsole, screenshot, showScreen, signIn } from './support/console.js';
import { png } from './support/images.js';
import { TcpProxy } from './support/tcp-proxy.js';

/**
 * The console's chat screen (DESIGN §17) in Debian's Chromium against built web and worker
 * processes: tokens as they arrive, approvals, inject, a reload that resumes the stream with
 * Last-Event-ID, an image sent with the question, a DAG plan, citations. The local model answers
 * word by word, TOKEN_DELAY_MS apart, so runs are still streaming when the test acts on them.
 */
let stack: Stack;
let browser: Awaited<ReturnType<typeof import('./support/browser.js').headlessChromium>>;

const TOKEN_DELAY_MS = '60';
/** The local model quotes the question: a long one makes a long answer (several seconds of tokens). */
const LONG_QUESTION =
  'Please tell me, in as many words as it takes, how a console that streams the answer of an agent word by word can survive a reload of the page without showing any word twice, and what it keeps in the tab meanwhile';

beforeAll(async () => {
  if (!chromiumInstalled) return;
  stack = await startStack({ env: { LOCAL_MODEL_TOKEN_DELAY_MS: TOKEN_DELAY_MS } });
  const { headlessChromium } = await import('./support/browser.js');
  browser = await headlessChromium();
}, 90_000);
afterAll(async () => {
  if (!chromiumInstalled) return;
  await browser.close();
  await stack.stop();
});

async function chatAs(user: { email: string; password: string }) {
  const opened = await openConsole(browser.context, stack.url);
  await opened.page.setViewportSize({ width: 1280, height: 900 });
  await signIn(opened.page, user);
  await showScreen(opened.page, '/chat', 'Chat');
  return opened;
}

async function ask(page: Page, q: string) {
  await page.getByLabel('Message', { exact: true }).fill(q);
  await page.getByRole('button', { name: 'Send' }).click();
}

const answerText = (page: Page) => page.getByRole('region', { name: 'Answer' }).last().textContent();
const doneLine = (page: Page) => page.locator('.run .done').last();
const conversationOf = (page: Page) => new URL(page.url()).hash.replace('#/chat/', '');

describe.skipIf(!chromiumInstalled)('console chat', () => {
  it('streams an answer: tokens are in the DOM before done, then the answer equals the stored message', { timeout: 90_000 }, async () => {
    const user = await stack.user();
    const { page, logged, requested } = await chatAs(user);
    await ask(page, LONG_QUESTION);
    // Mid-stream: some answer text, no done line yet.
    await page.waitForFunction(() => {
      const answer = document.querySelector('section[aria-label="Answer"]');
      return (answer?.textContent?.split(/\s+/).length ?? 0) > 4 && !document.querySelector('.run .done');
    });
    const partial = (await answerText(page))!;
    await screenshot(page, 'chat-mid-stream');
    await doneLine(page).waitFor({ timeout: 60_000 });
    expect(await doneLine(page).textContent()).toContain('succeeded');
    const final = (await answerText(page))!;
    expect(final.startsWith(partial.trimEnd())).toBe(true);
    expect(final).toContain(LONG_QUESTION);
    // The route now names the conversation the run made; its stored answer is what the page shows.
    const conversationId = conversationOf(page);
    const messages = await stack.api(user.key, 'GET', `/api/conversations/${conversationId}/messages`);
    const stored = messages.body.items.find((m: { role: string }) => m.role === 'assistant');
    expect(stored.content).toBe(final);
    // Reloaded once the run is over: /chat/{id} shows the stored history, the answer once.
    await page.reload();
    await page.waitForSelector('#app[data-ready="true"]');
    await page.locator('.message.assistant .text').first().waitFor();
    expect(await page.locator('.message.user .text').allTextContents()).toEqual([LONG_QUESTION]);
    expect(await page.locator('.message.assistant .text').allTextContents()).toEqual([final]);
    expectSelfContained(stack.url, requested, logged);
    await page.close();
  });

  it('a tool call waiting for approval: Approve, then the tool result and the answer arrive', { timeout: 90_000 }, async () => {
    const user = await stack.user();
    const agent = await stack.api(user.key, 'POST', '/api/agents', { name: 'careful', tool_approval: ['calculator'] });
    expect(agent.status).toBe(201);
    const { page, logged, requested } = await chatAs(user);
    await page.getByLabel('Agent').selectOption({ label: 'careful (default model)' });
    await ask(page, 'What is 6*7?');
    const approval = page.getByRole('group', { name: 'Approval for calculator' });
    await approval.getByRole('button', { name: 'Approve' }).waitFor();
    await expect.poll(() => page.locator('.run .badge').last().textContent()).toBe('waiting');
    await screenshot(page, 'chat-approval-pending');
    await approval.getByRole('button', { name: 'Approve' }).click();
    await doneLine(page).waitFor({ timeout: 60_000 });
    await expect.poll(() => approval.textContent()).toContain('Approved.');
    expect(await page.locator('.tool-result').last().textContent()).toContain('42');
    expect(await answerText(page)).toBe('The result of 6*7 is 42.');
    expectSelfContained(stack.url, requested, logged);
    await page.close();
  });

  it('injects into a running run: the injected message shows in the transcript and the answer quotes it', { timeout: 90_000 }, async () => {
    const user = await stack.user();
    const { page } = await chatAs(user);
    await ask(page, LONG_QUESTION);
    const box = page.getByLabel('Message to inject');
    await box.fill('please also say hello');
    await page.getByRole('button', { name: 'Inject', exact: true }).click();
    await page.locator('.injected-step').filter({ hasText: 'please also say hello' }).waitFor({ timeout: 30_000 });
    await doneLine(page).waitFor({ timeout: 60_000 });
    expect(await answerText(page)).toContain('"please also say hello"');
    await page.close();
  });

  it('cancels a running run: it ends cancelled and the run controls go away', { timeout: 90_000 }, async () => {
    const user = await stack.user();
    const { page } = await chatAs(user);
    await ask(page, LONG_QUESTION);
    await page.waitForFunction(() => (document.querySelector('section[aria-label="Answer"]')?.textContent?.length ?? 0) > 0);
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await doneLine(page).waitFor({ timeout: 30_000 });
    expect(await doneLine(page).textContent()).toContain('cancelled');
    await expect.poll(() => page.getByLabel('Message to inject').count()).toBe(0);
    const runs = await stack.identity.models.Run.query().where({ user_id: user.user.id });
    expect(runs.map((run) => run.status)).toEqual(['cancelled']);
    await page.close();
  });

  it('a reload mid-run resumes the stream with Last-Event-ID: every word once, the answer as stored', { timeout: 90_000 }, async () => {
    const user = await stack.user();
    const { page, logged } = await chatAs(user);
    await ask(page, LONG_QUESTION);
    await page.waitForFunction(() => (document.querySelector('section[aria-label="Answer"]')?.textContent?.split(/\s+/).length ?? 0) > 5 && !document.querySelector('.run .done'));
    const resumedWith: (string | undefined)[] = [];
    page.on('request', (request) => {
      if (/\/api\/runs\/[^/]+\/events$/.test(new URL(request.url()).pathname)) resumedWith.push(request.headers()['last-event-id']);
    });
    await page.reload();
    await page.waitForSelector('#app[data-ready="true"]');
    // The transcript so far comes back from the tab's storage, then the stream goes on from there.
    const answer = page.getByRole('region', { name: 'Answer' });
    await answer.waitFor();
    const restored = (await answer.textContent())!;
    expect(restored.length).toBeGreaterThan(0);
    await doneLine(page).waitFor({ timeout: 60_000 });
    const final = (await answer.textContent())!;
    expect(final.startsWith(restored)).toBe(true);
    expect(resumedWith.length).toBeGreaterThanOrEqual(1);
    expect(resumedWith[0]).toMatch(/^\d+-\d+$/);

    const conversationId = conversationOf(page);
    const messages = await stack.api(user.key, 'GET', `/api/conversations/${conversationId}/messages`);
    const stored = messages.body.items.find((m: { role: string }) => m.role === 'assistant');
    expect(final).toBe(stored.content);
    // Exactly once on the page: no repeated token, no copy from the history.
    const transcript = (await page.getByRole('log', { name: 'Transcript' }).textContent())!;
    expect(transcript.split(stored.content).length - 1).toBe(1);
    expect(await page.getByRole('region', { name: 'Answer' }).count()).toBe(1);
    expect(logged.filter((line) => line.startsWith('pageerror'))).toEqual([]);
    await page.close();
  });

  it('a dropped connection mid-run: the stream resumes after the last event, every word once', { timeout: 90_000 }, async () => {
    const user = await stack.user();
    const web = new URL(stack.url);
    const proxy = await new TcpProxy({ host: web.hostname, port: Number(web.port) }).start();
    const page = await browser.context.newPage();
    try {
      await page.goto(`http://127.0.0.1:${proxy.port}/console`);
      await page.waitForSelector('#app[data-ready="true"]');
      await signIn(page, user);
      await showScreen(page, '/chat', 'Chat');
      await ask(page, LONG_QUESTION);
      await page.waitForFunction(() => (document.querySelector('section[aria-label="Answer"]')?.textContent?.split(/\s+/).length ?? 0) > 4 && !document.querySelector('.run .done'));
      await proxy.cut();
      await page.getByText(/The connection dropped; resuming the stream/).waitFor();
      await proxy.start();
      await doneLine(page).waitFor({ timeout: 60_000 });
      const final = (await answerText(page))!;
      const messages = await stack.api(user.key, 'GET', `/api/conversations/${conversationOf(page)}/messages`);
      expect(final).toBe(messages.body.items.find((m: { role: string }) => m.role === 'assistant').content);
      expect(await page.getByRole('region', { name: 'Answer' }).count()).toBe(1);
    } finally {
      await page.close();
      await proxy.cut();
    }
  });

  it('sends an attached image with the question: previewed in the transcript, stored on the question', { timeout: 90_000 }, async () => {
    const user = await stack.user();
    const { page, logged, requested } = await chatAs(user);
    await page.getByLabel('Attach images').setInputFiles({ name: 'cat.png', mimeType: 'image/png', buffer: await png(64, 48) });
    await page.getByRole('img', { name: 'cat.png' }).waitFor();
    await ask(page, 'What is in this picture?');
    await doneLine(page).waitFor({ timeout: 60_000 });
    const preview = page.locator('.run').getByRole('img', { name: 'cat.png' });
    expect(await preview.getAttribute('src')).toMatch(/^blob:/);
    expect(await preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(64);
    expect(await answerText(page)).toContain('I see 1 image: cat.png (PNG, 64×48).');
    await screenshot(page, 'chat-image');
    const messages = await stack.api(user.key, 'GET', `/api/conversations/${conversationOf(page)}/messages`);
    const question = messages.body.items.find((m: { role: string }) => m.role === 'user');
    expect(question.attachments).toEqual([expect.objectContaining({ filename: 'cat.png', content_type: 'image/png', width: 64, height: 48, deleted: false })]);
    expectSelfContained(stack.url, requested, logged);
    await page.close();
  });

  it('a DAG run shows its plan and each node’s state', { timeout: 90_000 }, async () => {
    const user = await stack.user();
    const { page, logged, requested } = await chatAs(user);
    await page.getByLabel('Mode').selectOption('dag');
    await ask(page, 'What is 2+3 and what is 4*5?');
    const plan = page.getByRole('table', { name: 'Plan' });
    await plan.waitFor({ timeout: 30_000 });
    await doneLine(page).waitFor({ timeout: 60_000 });
    const rows = await plan.locator('tbody tr').allTextContents();
    expect(rows.length).toBe(3);
    expect(rows[0]).toContain('q1');
    expect(rows[1]).toContain('q2');
    for (const row of rows) expect(row).toContain('succeeded');
    expect(await answerText(page)).toMatch(/5[\s\S]*20/);
    // Each node numbers its calls from call_1: each result is shown with its own call.
    const calls = await page.locator('.run .tool').allTextContents();
    expect(calls.map((call) => call.replace(/\s+/g, ' '))).toEqual([expect.stringMatching(/2\+3.*→ 5$/), expect.stringMatching(/4\*5.*→ 20$/)]);
    await screenshot(page, 'chat-dag-plan');
    expectSelfContained(stack.url, requested, logged);
    await page.close();
  });

  it('an answer from a knowledge base shows its citations', { timeout: 90_000 }, async () => {
    const user = await stack.user();
    const kb = await stack.api(user.key, 'POST', '/api/knowledge-bases', { name: 'Support docs' });
    const form = new FormData();
    form.append('file', new Blob(['Our refund policy: purchases can be returned within 30 days for a full refund.'], { type: 'text/plain' }), 'refunds.txt');
    await fetch(`${stack.url}/api/knowledge-bases/${kb.body.id}/documents`, { method: 'POST', headers: { authorization: `Bearer ${user.key}` }, body: form });
    await expect
      .poll(async () => (await stack.api(user.key, 'GET', `/api/knowledge-bases/${kb.body.id}/documents`)).body.items[0]?.status, { timeout: 30_000 })
      .toBe('ready');
    await stack.api(user.key, 'POST', '/api/agents', { name: 'support', knowledge_base_ids: [kb.body.id] });
    const { page } = await chatAs(user);
    await page.getByLabel('Agent').selectOption({ label: 'support (default model)' });
    await ask(page, 'What is the refund policy?');
    await doneLine(page).waitFor({ timeout: 60_000 });
    expect(await page.locator('.run .citations').last().textContent()).toContain('refunds.txt');
    await screenshot(page, 'chat-citations');
    await page.close();
  });
});
