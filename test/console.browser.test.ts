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
    await signIn(page, user);
    await showScreen(page, '/chat', /chat/i);
    await screenshot(page, 'shell');
    expectSelfContained(stack.url, requested, logged);
  });
});
