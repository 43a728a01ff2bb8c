import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { chromiumInstalled } from './support/chromium.js';

/**
 * The queue dashboard (bull-board at /admin/queues) in a real headless Chromium (Debian's package):
 * refused without an admin, loaded for one, every asset from this server (no CDN).
 * Skipped when /usr/bin/chromium is absent (the summary line says so).
 */
let app: TestApp;
let adminKey: string;
let memberKey: string;
beforeAll(async () => {
  app = await startTestApp();
  const admin = await app.signedInUser('admin');
  adminKey = (await app.request('POST', '/api/me/api-keys', { token: admin.token, body: { name: 'ops', scopes: 'admin' } })).body.key;
  const member = await app.signedInUser('member');
  memberKey = (await app.request('POST', '/api/me/api-keys', { token: member.token, body: { name: 'k' } })).body.key;
});
afterAll(() => app.close());

describe('queue dashboard', () => {
  it('without a session: the page redirects to the sign-in form, its API answers 401 JSON', async () => {
    const page = await fetch(`${app.url}/admin/queues/`, { redirect: 'manual', headers: { accept: 'text/html' } });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/admin/queues/login');
    const api = await app.request('GET', '/admin/queues/api/queues');
    expect(api.status).toBe(401);
    expect(api.body).toEqual({ error: 'unauthorized', message: expect.stringContaining('/admin/queues/login') });
    // A member's credential, as a header, is refused too; an admin's is accepted.
    expect((await app.request('GET', '/admin/queues/api/queues', { token: memberKey })).status).toBe(403);
    const asAdmin = await app.request('GET', '/admin/queues/api/queues', { token: adminKey });
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.body.queues.map((q: { name: string }) => q.name).sort()).toEqual(['agent-runs', 'evals', 'kb-ingest', 'webhook-deliveries']);
  });

  it('odd requests to the dashboard answer 4xx JSON, never 5xx; run jobs are read-only there', async () => {
    const cases: [string, string, string | undefined, number][] = [
      ['PROPFIND', '/admin/queues/api/queues', adminKey, 405],
      ['DELETE', '/admin/queues/login', undefined, 405],
      ['PUT', '/admin/queues/api/queues/agent-runs/pause', adminKey, 405],
      ['GET', '/admin/queues/api/no/such/thing', adminKey, 404],
      ['GET', '/admin/queues/api/queues', 'svc_forged', 401],
    ];
    for (const [method, path, token, status] of cases) {
      const res = await app.request(method, path, { token });
      expect(res.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${method} ${path}: ${res.text.slice(0, 200)}`).toBeLessThan(500);
      if (status !== 405 || method !== 'PUT') expect(res.status, `${method} ${path}`).toBe(status);
    }
    const paused = await app.services.queue.isPaused();
    expect(paused).toBe(false);
    // A login form far too large, or with no credential, is the form again (401), not an error.
    const huge = await fetch(`${app.url}/admin/queues/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${'x'.repeat(40_000)}` });
    expect(huge.status).toBe(401);
    expect(huge.headers.get('content-security-policy')).toContain("default-src 'self'");
  });

  it.skipIf(!chromiumInstalled)('loads in a real browser for an admin and is refused for a member', { timeout: 90_000 }, async () => {
    const { headlessChromium } = await import('./support/browser.js');
    const browser = await headlessChromium();
    try {
      const page = await browser.context.newPage();
      const foreign: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(app.url) && !request.url().startsWith('data:')) foreign.push(request.url());
      });

      await page.goto(`${app.url}/admin/queues/`);
      expect(new URL(page.url()).pathname).toBe('/admin/queues/login');
      await page.fill('input[name=token]', memberKey);
      await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
      expect(await page.textContent('body')).toContain('needs an admin');
      expect(await browser.context.cookies()).toEqual([]);

      await page.fill('input[name=token]', adminKey);
      await Promise.all([page.waitForURL(`${app.url}/admin/queues/`), page.click('button[type=submit]')]);
      // bull-board's React app renders the queues it reads from its API with the session cookie.
      await page.getByText('agent-runs').first().waitFor({ timeout: 30_000 });
      await page.getByText('kb-ingest').first().waitFor({ timeout: 30_000 });
      await page.screenshot({ path: '/tmp/ap-queue-dashboard.png' });
      const [cookie] = await browser.context.cookies();
      expect(cookie).toMatchObject({ name: 'ap_dashboard', httpOnly: true, sameSite: 'Strict', path: '/admin/queues' });
      expect(cookie!.value).not.toContain(adminKey);
      expect(foreign).toEqual([]);

      // Signing out ends the session.
      await page.evaluate(() => fetch('/admin/queues/logout', { method: 'POST' }));
      expect((await page.request.get(`${app.url}/admin/queues/api/queues`)).status()).toBe(401);
    } finally {
      await browser.close();
    }
  });
});
