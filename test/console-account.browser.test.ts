import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumInstalled } from './support/chromium.js';
import { startStack, type Stack } from './support/stack.js';
import { openConsole, screenshot, showScreen, signIn } from './support/console.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { createDatabase } from './support/database.js';

/**
 * The console's account and admin screens (DESIGN §17–§19) in Chromium against built web and
 * worker processes: API keys shown once, schedules, webhooks and their deliveries, and what only
 * admins see (users, runs, the usage chart, model prices, the audit log).
 */
let stack: Stack;
let receiver: WebhookReceiver;
let browser: Awaited<ReturnType<typeof import('./support/browser.js').headlessChromium>>;
let database: Awaited<ReturnType<typeof createDatabase>>;

beforeAll(async () => {
  if (!chromiumInstalled) return;
  receiver = await WebhookReceiver.start();
  // The admin screens show every user's runs, usage and audit entries: a database of its own keeps other files' out.
  database = await createDatabase();
  stack = await startStack({ env: { DATABASE_URL: database.url } });
  const { headlessChromium } = await import('./support/browser.js');
  browser = await headlessChromium();
}, 90_000);
afterAll(async () => {
  if (!chromiumInstalled) return;
  await browser.close();
  await stack.stop();
  await receiver.close();
  await database.drop();
});

/** A background run as `key`, waited for until it is final. */
async function finishedRun(key: string, q: string) {
  const started = await stack.api(key, 'POST', '/api/runs', { mode: 'react', q });
  expect(started.status).toBe(202);
  const run = await stack.api(key, 'GET', `/api/runs/${started.body.run_id}?wait=30`);
  expect(run.body.status).toBe('succeeded');
  return run.body as { id: string; cost: number | null };
}

async function signedIn(role: 'member' | 'admin') {
  const user = await stack.user(role);
  const { page, logged } = await openConsole(browser.context, stack.url);
  await signIn(page, user);
  return { page, user, logged };
}

/** Presses `refresh` until `done` is on the page (a worker writes what the page waits for). */
async function refreshUntil(page: Page, refresh: string, done: () => Promise<boolean>) {
  await expect
    .poll(
      async () => {
        await page.getByRole('button', { name: refresh }).click();
        await page.waitForSelector('[aria-busy="true"]', { state: 'detached' });
        return done();
      },
      { timeout: 20_000, interval: 300 },
    )
    .toBe(true);
}

const noPageErrors = (logged: string[]) => expect(logged.filter((line) => line.startsWith('pageerror'))).toEqual([]);

describe.skipIf(!chromiumInstalled)('console account and admin screens', () => {
  it('an API key is shown once in full, works, and afterwards only its prefix is listed', { timeout: 60_000 }, async () => {
    const { page, logged } = await signedIn('member');
    await showScreen(page, '/keys', 'API keys');
    await page.getByLabel('Key name').fill('deploy bot');
    await page.getByRole('checkbox', { name: 'chat' }).check();
    await page.getByLabel('Rate limit (requests per minute)').fill('60');
    await page.getByLabel('Token budget').fill('10000');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('region', { name: /Your new key/ });
    await shown.waitFor();
    await expect(shown.textContent()).resolves.toContain('you will not see it again');
    const key = (await shown.locator('.secret').textContent())!.trim();
    expect(key).toMatch(/^svc_\w{30,}/);
    await screenshot(page, 'keys-created');

    // The key works, within its scope.
    const verify = await fetch(`${stack.url}/api/auth/verify`, { headers: { authorization: `Bearer ${key}` } });
    expect(verify.status).toBe(200);
    expect((await stack.api(key, 'GET', '/api/schedules')).status).toBe(200);
    expect((await stack.api(key, 'GET', '/api/agents')).status).toBe(403);

    // Away and back: the list has its prefix, limits and budget, and the full key is nowhere in the page.
    await showScreen(page, '/webhooks', 'Webhooks');
    await showScreen(page, '/keys', 'API keys');
    const row = page.getByRole('row', { name: /deploy bot/ });
    await row.waitFor();
    expect(await page.getByRole('region', { name: /Your new key/ }).count()).toBe(0);
    expect(await page.content()).not.toContain(key);
    expect(await row.textContent()).toContain(key.slice(0, 8));
    expect(await row.textContent()).toMatch(/60 req\/min/);
    expect(await row.textContent()).toMatch(/0 \/ 10,000 tokens per day/);
    expect(await row.textContent()).toContain('chat');
    await screenshot(page, 'keys');

    // Disabled, the key is refused; deleted (after confirming), it is gone from the list.
    await page.getByRole('button', { name: 'Disable deploy bot' }).click();
    await row.getByText('disabled').waitFor();
    expect((await fetch(`${stack.url}/api/auth/verify`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await row.waitFor({ state: 'detached' });
    noPageErrors(logged);
    await page.close();
  });

  it('a schedule created in the console is listed with its next run; Trigger now starts a run', { timeout: 60_000 }, async () => {
    const { page, user, logged } = await signedIn('member');
    await showScreen(page, '/schedules', 'Schedules');
    await page.getByLabel('Schedule name').fill('Morning report');
    await page.getByLabel('Question').fill('What is 6*7?');
    await page.getByLabel('Cron expression').fill('0 9 * * 1-5');
    await page.getByLabel('Time zone').selectOption('Europe/Berlin');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    const row = page.getByRole('row', { name: /Morning report/ });
    await row.waitFor();
    const [schedule] = (await stack.api(user.key, 'GET', '/api/schedules')).body.items;
    expect(schedule).toMatchObject({ name: 'Morning report', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', enabled: true });
    expect(schedule.next_run_at).not.toBeNull();
    expect(await row.locator(`time[datetime="${schedule.next_run_at}"]`).count()).toBe(1);
    await screenshot(page, 'schedules');

    await row.getByRole('link', { name: 'Morning report' }).click();
    await page.getByRole('heading', { level: 1, name: 'Schedule: Morning report' }).waitFor();
    await page.getByRole('button', { name: 'Trigger now' }).click();
    await page.getByRole('status').filter({ hasText: 'started' }).waitFor();
    await refreshUntil(page, 'Refresh', async () => (await page.getByRole('table', { name: /schedule's runs/ }).getByText('succeeded').count()) > 0);
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    await screenshot(page, 'schedule-detail');
    noPageErrors(logged);
    await page.close();
  });

  it('a member sees no admin screens; an admin sees them and the users list loads', { timeout: 60_000 }, async () => {
    const { page } = await signedIn('member');
    expect(await page.getByText('Administration').count()).toBe(0);
    await showScreen(page, '/admin/users', 'Not found');
    await page.getByRole('button', { name: 'Sign out' }).click();

    const admin = await stack.user('admin');
    await signIn(page, admin);
    await page.getByText('Administration').waitFor();
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    await page.getByRole('row', { name: new RegExp(admin.email) }).waitFor();
    // A user created here gets a generated password, shown once, that signs in.
    const email = `console-made-${Date.now()}@example.test`;
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByRole('button', { name: 'Add user' }).click();
    const password = (await page.getByRole('region', { name: `Password for ${email}` }).locator('.secret').textContent())!.trim();
    const login = await fetch(`${stack.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    expect(login.status).toBe(200);
    const made = page.getByRole('row', { name: new RegExp(email) });
    await made.getByLabel(`Role of ${email}`).selectOption('restricted');
    await expect.poll(async () => (await stack.api(admin.key, 'GET', `/api/admin/users?q=${encodeURIComponent(email)}`)).body.items[0]?.role).toBe('restricted');
    await page.getByRole('button', { name: 'I have copied it, hide it' }).click();
    await screenshot(page, 'admin-users');
    await page.close();
  });

  it('a webhook shows its secret once, and its deliveries with Redeliver', { timeout: 60_000 }, async () => {
    const { page, user, logged } = await signedIn('member');
    const path = `/hooks/${user.user.id}`;
    await showScreen(page, '/webhooks', 'Webhooks');
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}${path}`);
    await page.getByLabel('Description').fill('run results to the test receiver');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const shown = page.getByRole('region', { name: /Signing secret/ });
    const secret = (await shown.locator('.secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await screenshot(page, 'webhooks-created');
    await page.getByRole('button', { name: 'I have copied it, hide it' }).click();
    expect(await page.content()).not.toContain(secret);
    await screenshot(page, 'webhooks');

    // A run ends: the receiver gets the event, and the webhook's page lists the delivery.
    const run = await finishedRun(user.key, 'What is 12*7?');
    const [received] = await receiver.waitFor(path, 1);
    expect(JSON.parse(received!.body).data.run_id).toBe(run.id);
    await page.getByRole('link', { name: `${receiver.url}${path}` }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook' }).waitFor();
    const deliveries = page.getByRole('table', { name: /Deliveries/ });
    await refreshUntil(page, 'Refresh', async () => (await deliveries.getByText('delivered').count()) > 0);
    expect(await deliveries.getByRole('row', { name: /run\.succeeded/ }).textContent()).toContain('200');
    await deliveries.getByRole('button', { name: /^Redeliver/ }).click();
    await receiver.waitFor(path, 2);
    expect(receiver.at(path)[1]!.headers['webhook-id']).toBe(received!.headers['webhook-id']);
    await refreshUntil(page, 'Refresh', async () => (await deliveries.getByText('pending').count()) === 0 && (await deliveries.getByText('delivered').count()) === 1);
    await screenshot(page, 'webhook-deliveries');
    noPageErrors(logged);
    await page.close();
  });

  it("admins see usage per day as a chart with today's bar, runs, model prices and the audit log", { timeout: 90_000 }, async () => {
    const admin = await stack.user('admin');
    expect((await stack.api(admin.key, 'PUT', '/api/admin/model-prices/local', { input_per_million: 2.5, output_per_million: 10 })).status).toBeLessThan(300);
    const run = await finishedRun(admin.key, 'What is 2+2?');
    expect(run.cost).toBeGreaterThan(0);
    const { page, logged } = await openConsole(browser.context, stack.url);
    await signIn(page, admin);

    await showScreen(page, '/admin/usage', 'Usage and cost');
    const today = new Date().toISOString().slice(0, 10);
    const bar = page.locator(`svg.usage-chart rect.bar[data-day="${today}"]`);
    await bar.waitFor();
    expect(Number(await bar.getAttribute('data-value'))).toBeGreaterThan(0);
    expect(Number(await bar.getAttribute('height'))).toBeGreaterThan(0);
    await expect(page.getByRole('img', { name: /Tokens per day/ }).count()).resolves.toBe(1);
    await expect(page.getByRole('table', { name: 'Per day (days with runs)' }).getByRole('row', { name: new RegExp(today) }).count()).resolves.toBe(1);
    await page.getByLabel('Chart shows').selectOption('cost');
    expect(Number(await bar.getAttribute('data-value'))).toBeGreaterThan(0);
    await screenshot(page, 'admin-usage');

    await showScreen(page, '/admin/runs', 'Runs');
    await page.getByRole('row', { name: /What is 2\+2\?/ }).waitFor();
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No run matches.').waitFor();
    await page.getByLabel('Status').selectOption('');
    await page.getByRole('row', { name: /What is 2\+2\?/ }).waitFor();
    await screenshot(page, 'admin-runs');

    await showScreen(page, '/admin/prices', 'Model prices');
    await page.getByLabel('Model', { exact: true }).fill('openai/gpt-4o');
    await page.getByLabel('Input, per million tokens').fill('2.5');
    await page.getByLabel('Output, per million tokens').fill('10');
    await page.getByRole('button', { name: 'Save price' }).click();
    await page.getByRole('row', { name: /openai\/gpt-4o/ }).waitFor();
    expect((await stack.api(admin.key, 'GET', '/api/admin/model-prices/openai%2Fgpt-4o')).body.output_per_million).toBe(10);
    await screenshot(page, 'admin-prices');

    await showScreen(page, '/admin/audit', 'Audit log');
    await page.getByLabel('Action').selectOption('model_price.set');
    await page.getByRole('row', { name: /openai\/gpt-4o/ }).waitFor();
    // Filtered (the unfiltered page had the admin's sign-in), only model_price.set entries are left.
    await expect.poll(() => page.getByRole('row', { name: /auth\.login/ }).count()).toBe(0);
    await page.getByRole('row', { name: /model_price\.set.*openai\/gpt-4o/ }).waitFor();
    await screenshot(page, 'admin-audit');
    noPageErrors(logged);
    await page.close();
  });
});
