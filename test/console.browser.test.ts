import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumInstalled } from './support/chromium.js';
import { startStack, type Stack } from './support/stack.js';
import { expectSelfContained, openConsole, screenshot, showScreen, signIn } from './support/console.js';

/**
 * The console (DESIGN §17) in Debian's Chromium against built web and worker processes: sign-in,
 * the session's refresh on a 401 and its end, what a member may see. Skipped without chromium.
 */
let stack: Stack;
let browser: Awaited<ReturnType<typeof import('./support/browser.js').headlessChromium>>;

beforeAll(async () => {
  if (!chromiumInstalled) return;
  stack = await startStack();
  const { headlessChromium } = await import('./support/browser.js');
  browser = await headlessChromium();
}, 90_000);
afterAll(async () => {
  if (!chromiumInstalled) return;
  await browser.close();
  await stack.stop();
});

describe.skipIf(!chromiumInstalled)('console', () => {
  it('signs in with email and password; every file comes from this origin under the CSP', { timeout: 60_000 }, async () => {
    const user = await stack.user('member');
    const { page, logged, requested } = await openConsole(browser.context, stack.url);
    await page.getByRole('heading', { name: 'Sign in to Agent Platform' }).waitFor();
    await screenshot(page, 'sign-in');
    // A wrong password is a readable message on the form, not a blank page.
    await signInExpectingError(page, { email: user.email, password: 'not-the-password' });
    await signIn(page, user);
    await showScreen(page, '/chat', /chat/i);
    await screenshot(page, 'shell');
    // The access token is kept in memory only: nothing in storage holds it.
    const stored = await page.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage }));
    expect(stored).not.toMatch(/eyJ/);
    expect(requested.some((url) => url.includes('/console/assets/'))).toBe(true);
    expectSelfContained(stack.url, requested, logged.filter((line) => !line.includes('401')));
    await page.close();
  });

  it('a reload keeps the session; signing out ends it', { timeout: 60_000 }, async () => {
    const user = await stack.user('member');
    const { page } = await openConsole(browser.context, stack.url);
    await signIn(page, user);
    await page.reload();
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Agent Platform' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to Agent Platform' }).waitFor();
    await page.close();
  });

  it('a 401 mid-session refreshes the session once and retries; the screen loads', { timeout: 60_000 }, async () => {
    const user = await stack.user('member');
    const { page } = await openConsole(browser.context, stack.url);
    await signIn(page, user);
    // The next API call answers 401 as an expired access token would (a fault at the browser's edge); the rest go through.
    let refused = 0;
    await page.route(/\/api\/(?!auth\/)/, async (route) => {
      if (refused++ > 0) return route.continue();
      await route.fulfill({ status: 401, contentType: 'application/json', body: JSON.stringify({ error: 'token_expired', message: 'The access token has expired' }) });
    });
    const refreshed = page.waitForResponse((res) => res.url().endsWith('/api/auth/refresh'));
    const retried = page.waitForResponse((res) => res.url().includes('/api/me/api-keys') && res.status() === 200);
    await showScreen(page, '/keys', /API keys/i);
    expect((await refreshed).status()).toBe(200);
    await retried;
    expect(refused).toBeGreaterThanOrEqual(2);
    await page.getByRole('cell', { name: 'test', exact: true }).first().waitFor();
    await expect(page.getByRole('navigation', { name: 'Console' }).isVisible()).resolves.toBe(true);
    // The refresh rotated the session: the login's refresh token is spent, the new one is not.
    const tokens = await stack.knex('refresh_tokens').where({ user_id: user.user.id }).orderBy('created_at');
    expect(tokens).toHaveLength(2);
    expect(tokens[0].used_at ?? tokens[0].revoked_at).not.toBeNull();
    await page.close();
  });

  it('a 401 whose refresh is refused (the account was disabled) returns to sign-in with a message', { timeout: 60_000 }, async () => {
    const admin = await stack.user('admin');
    const user = await stack.user('member');
    const { page } = await openConsole(browser.context, stack.url);
    await signIn(page, user);
    expect((await stack.api(admin.key, 'PATCH', `/api/admin/users/${user.user.id}`, { is_active: false })).status).toBe(200);
    await page.evaluate(() => (location.hash = '#/keys'));
    await page.getByRole('heading', { name: 'Sign in to Agent Platform' }).waitFor();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Your session has ended');
    await screenshot(page, 'session-ended');
    await page.close();
  });

  it('a member sees no admin screens; an admin does', { timeout: 60_000 }, async () => {
    const member = await stack.user('member');
    const { page } = await openConsole(browser.context, stack.url);
    await signIn(page, member);
    expect(await page.getByText('Administration').count()).toBe(0);
    await showScreen(page, '/admin/users', 'Not found');
    await page.getByRole('button', { name: 'Sign out' }).click();
    const admin = await stack.user('admin');
    await signIn(page, admin);
    await expect(page.getByRole('link', { name: 'Users' }).isVisible()).resolves.toBe(true);
    // The queue dashboard opens from the session (a one-time ticket): test/console-layout.browser.test.ts.
    await expect(page.getByRole('button', { name: /Queue dashboard/ }).isVisible()).resolves.toBe(true);
    await page.close();
  });
});

async function signInExpectingError(page: import('playwright-core').Page, user: { email: string; password: string }) {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').waitFor();
  expect(await page.getByRole('alert').textContent()).toMatch(/\w+/);
}
