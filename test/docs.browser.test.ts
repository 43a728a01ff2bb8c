import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { chromiumInstalled } from './support/chromium.js';

/**
 * GET /docs in a real headless Chromium (Debian's package) with every request off this server
 * refused: the page, Swagger UI and the document all come from the app, so it works offline.
 * Skipped when /usr/bin/chromium is absent (the summary line says so).
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe('the docs page', () => {
  it.skipIf(!chromiumInstalled)('renders every operation of /openapi.json with the outside network blocked', { timeout: 90_000 }, async () => {
    const document = (await app.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    const { headlessChromium } = await import('./support/browser.js');
    const browser = await headlessChromium();
    try {
      const outside: string[] = [];
      await browser.context.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(`${app.url}/`) || url.startsWith('data:')) return route.continue();
        outside.push(url);
        return route.abort('internetdisconnected');
      });
      const page = await browser.context.newPage();
      const failed: string[] = [];
      page.on('requestfailed', (request) => failed.push(request.url()));
      page.on('pageerror', (err) => failed.push(err.message));

      const res = await page.goto(`${app.url}/docs`);
      expect(res?.status()).toBe(200);
      await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
      await expect.poll(() => page.locator('.opblock').count(), { timeout: 30_000 }).toBe(operations.length);
      const rendered = await page.locator('.opblock-summary').evaluateAll((blocks) =>
        blocks.map((block) => `${block.querySelector('.opblock-summary-method')?.textContent} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
      );
      expect(rendered.sort()).toEqual(operations.sort());
      expect(await page.locator('.info .title').textContent()).toContain('Agent Platform API');
      await page.screenshot({ path: '/tmp/ap-docs.png' });
      expect(outside).toEqual([]);
      expect(failed).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
