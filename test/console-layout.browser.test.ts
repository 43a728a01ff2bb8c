import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumInstalled } from './support/chromium.js';
import { startStack, type Stack } from './support/stack.js';
import { openConsole, signIn } from './support/console.js';
import { createDatabase } from './support/database.js';
import { eventually } from './support/eventually.js';

/**
 * The console at a phone's width and a desktop's (DESIGN §17, issue 33): every screen fits 390 px
 * without sideways scrolling and starts near the top (the navigation folds into a menu); the queue
 * dashboard opens from the console's session; knowledge base settings and conversation titles are
 * edited in place; the schedule form names its own fields in errors. Built web and worker processes,
 * Debian's Chromium. Screenshots go to /tmp/shots-console-layout/.
 */
const SHOTS = '/tmp/shots-console-layout';
const WIDTHS = [1280, 390] as const;
let stack: Stack;
let database: Awaited<ReturnType<typeof createDatabase>>;
let browser: Awaited<ReturnType<typeof import('./support/browser.js').headlessChromium>>;
let admin: Awaited<ReturnType<Stack['user']>>;
const ids: Record<'agent' | 'kb' | 'schedule' | 'conversation', string> = { agent: '', kb: '', schedule: '', conversation: '' };

beforeAll(async () => {
  if (!chromiumInstalled) return;
  mkdirSync(SHOTS, { recursive: true });
  // Admin screens list every user's rows: a database of its own keeps other files' out.
  database = await createDatabase();
  stack = await startStack({ env: { DATABASE_URL: database.url } });
  const { headlessChromium } = await import('./support/browser.js');
  browser = await headlessChromium();
  admin = await stack.user('admin');
  // Rows with long names and text, so the tables and forms have something to squeeze.
  const long = 'A fairly long name that a real user would type for this thing';
  ids.agent = (await seed('/api/agents', { name: long, instructions: 'Answer briefly.', tools: ['calculator'] })).body.id;
  ids.kb = (await seed('/api/knowledge-bases', { name: 'Handbook', description: long })).body.id;
  ids.schedule = (await seed('/api/schedules', { name: long, q: 'What is 6*7?', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' })).body.id;
  const started = await seed('/api/runs', { mode: 'react', q: `What is 12*7? ${long}` });
  ids.conversation = started.body.conversation_id;
  // A loaded machine may answer the long poll before the run ends: ask again until it is final.
  const run = await eventually(async () => {
    const read = await stack.api(admin.key, 'GET', `/api/runs/${started.body.run_id}?wait=30`);
    return ['succeeded', 'failed', 'cancelled'].includes(read.body?.status) && read;
  }, 'the seeding run to end', { timeoutMs: 90_000, everyMs: 1000 });
  expect(run.body.status).toBe('succeeded');
}, 240_000);
afterAll(async () => {
  if (!chromiumInstalled) return;
  await browser.close();
  await stack.stop();
  await database.drop();
});

/** A row made as the admin. A busy shared machine may shed a request with 429 (Retry-After: 1): a client tries again, as the API asks. */
function seed(path: string, body: unknown) {
  return eventually(
    async () => {
      const res = await stack.api(admin.key, 'POST', path, body);
      if (res.status !== 429) expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
      return res.status !== 429 && res;
    },
    `POST ${path}`,
    { timeoutMs: 120_000, everyMs: 1000 },
  );
}

async function signedInAt(width: number): Promise<{ page: Page; logged: string[] }> {
  const { page, logged } = await openConsole(browser.context, stack.url);
  await page.setViewportSize({ width, height: 844 });
  await signIn(page, admin);
  return { page, logged };
}

/** Goes to a screen and waits until it has its heading and nothing is loading. */
async function show(page: Page, route: string): Promise<string> {
  await page.evaluate((hash) => (location.hash = hash), `#${route}`);
  await page.waitForFunction(() => document.querySelector('main h1') && !document.querySelector('main [aria-busy="true"]'));
  return (await page.locator('main h1').textContent()) ?? '';
}

const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });

/** How the page sits in its viewport: sideways overflow, and where the content (main's heading) starts. */
const measure = (page: Page) =>
  page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth, headingTop: document.querySelector('main h1')!.getBoundingClientRect().top + scrollY }));

describe.skipIf(!chromiumInstalled)('console layout', () => {
  it('every screen fits 390 px without sideways scrolling and starts near the top; at 1280 px too', { timeout: 240_000 }, async () => {
    const routes = [
      '/chat',
      '/conversations',
      `/conversations/${ids.conversation}`,
      '/agents',
      `/agents/${ids.agent}`,
      '/knowledge',
      `/knowledge/${ids.kb}`,
      '/connectors',
      '/schedules',
      `/schedules/${ids.schedule}`,
      '/keys',
      '/webhooks',
      '/admin/users',
      '/admin/runs',
      '/admin/usage',
      '/admin/prices',
      '/admin/audit',
    ];
    for (const width of WIDTHS) {
      const { page, logged } = await signedInAt(width);
      for (const route of routes) {
        const heading = await show(page, route);
        expect(heading, route).not.toBe('Not found');
        const { scrollWidth, innerWidth, headingTop } = await measure(page);
        expect(scrollWidth, `${route} at ${width} px`).toBeLessThanOrEqual(innerWidth);
        // Before: ~670 px of sidebar above the first heading at 390 px; now a one-line bar.
        if (width === 390) expect(headingTop, `${route}: where the content starts`).toBeLessThan(120);
        await shot(page, `${route.split('/').filter(Boolean).map((part) => (part.length > 20 ? 'detail' : part)).join('-')}-${width}`);
      }
      expect(logged.filter((line) => line.startsWith('pageerror'))).toEqual([]);
      await page.close();
    }
  });

  it('at 390 px the navigation is a menu: a button with aria-expanded, usable by keyboard, closed by Escape and by choosing a screen', { timeout: 60_000 }, async () => {
    const { page } = await signedInAt(390);
    const menu = page.getByRole('button', { name: 'Menu' });
    const agents = page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Agents' });
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('false');
    await expect(agents.isVisible()).resolves.toBe(false);
    await menu.focus();
    await page.keyboard.press('Enter');
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('true');
    await agents.waitFor();
    await shot(page, 'menu-open-390');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Escape');
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('false');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Menu');
    await page.keyboard.press('Space');
    await agents.click();
    await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('false');
    // Admin Runs at 390 px: each run a card showing its status, user and time.
    await show(page, '/admin/runs');
    const card = page.locator('table.stacked tbody tr').first();
    for (const label of ['Created', 'User', 'Status']) expect(await card.locator(`td[data-label="${label}"]`).isVisible(), label).toBe(true);
    await expect(card.textContent()).resolves.toContain('succeeded');
    await expect(card.textContent()).resolves.toContain(admin.email);
    await page.close();
  });

  for (const width of WIDTHS) {
    it(`an admin opens the queue dashboard from the console without pasting a credential (${width} px)`, { timeout: 90_000 }, async () => {
      const { page } = await signedInAt(width);
      if (width === 390) await page.getByRole('button', { name: 'Menu' }).click();
      const opened = browser.context.waitForEvent('page');
      await page.getByRole('button', { name: /Queue dashboard/ }).click();
      const dashboard = await opened;
      const posted: string[] = [];
      dashboard.on('request', (request) => posted.push(request.url()));
      await dashboard.waitForURL(`${stack.url}/admin/queues/`);
      await dashboard.getByText('agent-runs').first().waitFor({ timeout: 30_000 });
      await dashboard.setViewportSize({ width, height: 844 });
      await dashboard.screenshot({ path: `${SHOTS}/queue-dashboard-${width}.png` });
      // The ticket travelled in a form body: no URL the tab visited carries a credential.
      expect([dashboard.url(), ...posted].filter((url) => /ticket|token|key=/.test(url))).toEqual([]);
      const cookies = await browser.context.cookies(`${stack.url}/admin/queues/`);
      expect(cookies.find((cookie) => cookie.name === 'ap_dashboard')).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin/queues' });
      await dashboard.close();
      await browser.context.clearCookies();
      await page.close();
    });
  }

  it('the dashboard sign-in page is styled, fits 390 px and asks for no missing icon', { timeout: 60_000 }, async () => {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    const missing: string[] = [];
    page.on('response', (response) => response.status() === 404 && missing.push(response.url()));
    await page.goto(`${stack.url}/admin/queues/login`);
    await page.getByRole('heading', { name: 'Queue dashboard' }).waitFor();
    await expect(page.getByRole('link', { name: /Queue dashboard/ }).getAttribute('href')).resolves.toBe('/console#/chat');
    const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth }));
    expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
    await page.reload();
    await shot(page, 'queue-dashboard-login-390');
    expect(missing).toEqual([]);
    await page.close();
  });

  for (const width of WIDTHS) {
    it(`knowledge base settings and a conversation's title are edited in the console (${width} px)`, { timeout: 90_000 }, async () => {
      const { page } = await signedInAt(width);
      await show(page, `/knowledge/${ids.kb}`);
      await page.getByRole('button', { name: 'Edit settings' }).click();
      const form = page.getByRole('form', { name: 'Settings' });
      await form.getByLabel('Name').fill(`Handbook ${width}`);
      await form.getByLabel('Default retrieval').selectOption('keyword');
      await form.getByLabel('Description').fill(`Policies, edited at ${width} px`);
      await shot(page, `knowledge-settings-${width}`);
      await form.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('heading', { level: 1, name: `Handbook ${width}` }).waitFor();
      const kb = (await stack.api(admin.key, 'GET', `/api/knowledge-bases/${ids.kb}`)).body;
      expect(kb).toMatchObject({ name: `Handbook ${width}`, retrieval_mode: 'keyword', description: `Policies, edited at ${width} px` });

      await show(page, `/conversations/${ids.conversation}`);
      await page.getByRole('button', { name: 'Rename' }).click();
      await page.getByRole('form', { name: 'Rename conversation' }).getByLabel('Title').fill(`Sums at ${width}`);
      await shot(page, `conversation-rename-${width}`);
      await page.getByRole('button', { name: 'Save title' }).click();
      await page.getByRole('heading', { level: 1, name: `Sums at ${width}` }).waitFor();
      expect((await stack.api(admin.key, 'GET', `/api/conversations/${ids.conversation}`)).body.title).toBe(`Sums at ${width}`);
      const { scrollWidth, innerWidth } = await measure(page);
      expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
      await page.close();
    });

    it(`the schedule form's errors name its own fields (${width} px)`, { timeout: 60_000 }, async () => {
      const { page } = await signedInAt(width);
      await show(page, '/schedules');
      const form = page.getByRole('form', { name: 'New schedule' });
      await expect(form.getByText(/Five fields: minute hour day-of-month month day-of-week/).isVisible()).resolves.toBe(true);
      await form.getByLabel('Question').fill('What is 6*7?');
      await form.getByLabel('Cron expression').fill('every morning');
      await form.getByRole('button', { name: 'Create schedule' }).click();
      const alert = form.getByRole('alert');
      await alert.waitFor();
      const message = (await alert.textContent()) ?? '';
      expect(message).toMatch(/^Cron expression: /);
      expect(message).not.toMatch(/\bcron:/);
      await shot(page, `schedule-error-${width}`);
      await page.close();
    });
  }
});
