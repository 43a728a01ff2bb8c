import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

/** /console (DESIGN §17) as served: the built page under a strict CSP, its hashed assets, and odd requests refused plainly. */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe('console serving', () => {
  it('the page carries a strict CSP and loads only files of this origin, none inline', async () => {
    const page = await fetch(`${app.url}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    const html = await page.text();
    // Every script has a src on this origin; no inline script, no inline style.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc="\/console\/assets\/)[^>]*>/);
    expect(html).not.toMatch(/<style|style="/);
    expect(html).not.toMatch(/(src|href)="https?:/);
  });

  it('serves each built asset with its media type, cached for good (its name changes with its content)', async () => {
    const html = await (await fetch(`${app.url}/console`)).text();
    const assets = [...html.matchAll(/\/console\/assets\/[\w.-]+\.(js|css)/g)].map((m) => m[0]);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const path of assets) {
      const res = await fetch(`${app.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toContain(path.endsWith('.css') ? 'text/css' : 'text/javascript');
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    }
  });

  it.each([
    ['GET', '/console/assets/..%2F..%2Fpackage.json', 404],
    ['GET', '/console/assets/..%2F..%2F..%2Fsrc%2Fconfig.ts', 404],
    ['GET', '/console/assets/index.html', 404],
    ['GET', '/console/assets/%00.js', 422],
    ['GET', '/console/assets/no-such-chunk-0000.js', 404],
    ['GET', `/console/assets/${'a'.repeat(300)}.js`, 422],
    ['POST', '/console', 405],
    ['DELETE', '/console/assets/x.js', 405],
  ])('%s %s → %i JSON, never a file outside the build', async (method, path, status) => {
    const res = await fetch(`${app.url}${path}`, { method });
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = await res.json();
    expect(body).toHaveProperty(status === 422 ? 'detail' : 'error');
  });
});
