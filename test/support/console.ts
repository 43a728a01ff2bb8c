import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';

/** Where the console's browser tests leave their screenshots (one per screen), to be looked at. */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../../test-output/console/', import.meta.url));

export interface ConsoleUser {
  email: string;
  password: string;
}

/** A page that records what the console logged and every request the browser made (to assert nothing left this origin). */
export async function openConsole(context: BrowserContext, baseUrl: string): Promise<{ page: Page; logged: string[]; requested: string[] }> {
  const page = await context.newPage();
  const logged: string[] = [];
  const requested: string[] = [];
  page.on('console', (message) => logged.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => logged.push(`pageerror: ${error.message}`));
  page.on('request', (request) => requested.push(request.url()));
  await page.goto(`${baseUrl}/console`);
  await page.waitForSelector('#app[data-ready="true"]');
  return { page, logged, requested };
}

/** Signs in through the form and waits for the console's navigation. */
export async function signIn(page: Page, user: ConsoleUser): Promise<void> {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Console' }).waitFor();
}

/** Goes to a screen by its hash route and waits for its heading. */
export async function showScreen(page: Page, route: string, heading: string | RegExp): Promise<void> {
  await page.evaluate((hash) => (location.hash = hash), `#${route}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/** A full-page screenshot under test-output/console/NAME.png; its path is returned (and printed in the test's output). */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot: ${path}`);
  return path;
}

/** Nothing the page asked for left this origin (no CDN), and the page logged no error (a CSP refusal would be one). */
export function expectSelfContained(baseUrl: string, requested: string[], logged: string[]): void {
  const origin = new URL(baseUrl).origin;
  expect(requested.filter((url) => !url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:'))).toEqual([]);
  expect(logged.filter((line) => line.startsWith('error') || line.startsWith('pageerror'))).toEqual([]);
}
