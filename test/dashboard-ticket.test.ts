import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';

/**
 * The console's way into the queue dashboard (DESIGN §17): a one-time, short-lived, admin-only ticket
 * from POST /api/admin/dashboard-ticket, posted by a same-origin form to /admin/queues/enter, which
 * answers with the dashboard's cookie. Real Redis and HTTP.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const ticketFor = (token: string) => app.request('POST', '/api/admin/dashboard-ticket', { token });

/** Posts a ticket as the console's form does (same origin unless told otherwise); redirects are not followed. */
function enter(ticket: string, origin: string | null = app.url, fetchSite?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (origin !== null) headers.origin = origin;
  if (fetchSite) headers['sec-fetch-site'] = fetchSite;
  return fetch(`${app.url}/admin/queues/enter`, { method: 'POST', redirect: 'manual', headers, body: new URLSearchParams({ ticket }).toString() });
}

const cookieOf = (res: Response) => res.headers.getSetCookie().find((line) => line.startsWith('ap_dashboard='))!;
const dashboardApi = (cookie: string, init: RequestInit = {}) => fetch(`${app.url}/admin/queues/api/queues`, { redirect: 'manual', ...init, headers: { cookie: cookie.split(';')[0]!, ...init.headers } });

describe('dashboard tickets', () => {
  it('an admin gets a ticket in the body only; exchanging it sets a strict, HttpOnly, path-scoped cookie that opens the dashboard', async () => {
    const admin = await app.signedInUser('admin');
    const issued = await ticketFor(admin.token);
    expect(issued.status).toBe(201);
    expect(issued.body).toEqual({ ticket: expect.stringMatching(/^[\w-]{43}$/), enter_url: '/admin/queues/enter', expires_at: expect.any(String) });
    const ttlMs = Date.parse(issued.body.expires_at) - Date.now();
    expect(ttlMs).toBeGreaterThan(0);
    expect(ttlMs).toBeLessThanOrEqual(60_000);

    const entered = await enter(issued.body.ticket);
    expect(entered.status).toBe(303);
    expect(entered.headers.get('location')).toBe('/admin/queues/');
    const cookie = cookieOf(entered);
    expect(cookie).toMatch(/; path=\/admin\/queues/);
    expect(cookie).toMatch(/; samesite=strict/);
    expect(cookie).toMatch(/; httponly/);
    expect(cookie).toMatch(/; expires=/);
    expect(cookie).not.toContain(issued.body.ticket);
    expect(cookie).not.toContain(admin.token);
    const queues = await dashboardApi(cookie);
    expect(queues.status).toBe(200);
  });

  it('a ticket works once: of concurrent exchanges exactly one gets the cookie; a replay is the sign-in page', async () => {
    const admin = await app.signedInUser('admin');
    const { ticket } = (await ticketFor(admin.token)).body;
    const answers = await Promise.all(Array.from({ length: 8 }, () => enter(ticket)));
    expect(answers.map((res) => res.status).sort()).toEqual([303, 401, 401, 401, 401, 401, 401, 401]);
    expect(answers.filter((res) => res.headers.getSetCookie().length > 0)).toHaveLength(1);
    const replay = await enter(ticket);
    expect(replay.status).toBe(401);
    expect(await replay.text()).toContain('has been used or has expired');
  });

  it('a member is refused a ticket (403); a made-up ticket opens nothing', async () => {
    const member = await app.signedInUser('member');
    const refused = await ticketFor(member.token);
    expect(refused.status).toBe(403);
    expect(refused.body.ticket).toBeUndefined();
    for (const forged of ['x'.repeat(43), '', 'a b', 'y'.repeat(5000)]) {
      const res = await enter(forged);
      expect(res.status, forged.slice(0, 10)).toBe(401);
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });

  it('an expired ticket opens nothing', async () => {
    const admin = await app.signedInUser('admin');
    const { ticket } = (await ticketFor(admin.token)).body;
    const key = app.services.keys.dashboardTicket(ticket);
    const ttl = await app.services.redis.ttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
    // Expire it now rather than waiting out its minute; Redis removes it as it would at its time.
    await app.services.redis.pexpire(key, 1);
    await eventually(async () => (await app.services.redis.exists(key)) === 0, 'the ticket to expire');
    expect((await enter(ticket)).status).toBe(401);
  });

  it('a ticket posted from another origin, or with no Origin, is refused and stays usable by the console', async () => {
    const admin = await app.signedInUser('admin');
    const { ticket } = (await ticketFor(admin.token)).body;
    const refused: [string | null, string | undefined][] = [
      ['https://evil.example', undefined],
      ['https://evil.example', 'same-origin'],
      ['null', undefined],
      ['null', 'cross-site'],
      ['null', 'same-site'],
      [null, undefined],
    ];
    for (const [origin, fetchSite] of refused) {
      const res = await enter(ticket, origin, fetchSite);
      expect(res.status, `${origin} ${fetchSite}`).toBe(403);
      expect((await res.json()).error).toBe('cross_origin');
    }
    // A page under Referrer-Policy: no-referrer (the console) posts with Origin: null; the browser's Sec-Fetch-Site vouches for it.
    expect((await enter(ticket, 'null', 'same-origin')).status).toBe(303);
  });

  it("the cookie's changes need this origin; a disabled admin's cookie stops working", async () => {
    const admin = await app.signedInUser('admin');
    const cookie = cookieOf(await enter((await ticketFor(admin.token)).body.ticket));
    const pause = (origin?: string) =>
      fetch(`${app.url}/admin/queues/api/queues/kb-ingest/pause`, { method: 'PUT', redirect: 'manual', headers: { cookie: cookie.split(';')[0]!, ...(origin ? { origin } : {}) } });
    expect((await pause()).status).toBe(403);
    expect((await pause('https://evil.example')).status).toBe(403);
    expect(await app.services.ingestQueue.isPaused()).toBe(false);
    const sameOrigin = await pause(app.url);
    expect(sameOrigin.status).toBeLessThan(400);
    expect(await app.services.ingestQueue.isPaused()).toBe(true);
    await app.services.ingestQueue.resume();

    const other = await app.signedInUser('admin');
    expect((await app.request('PATCH', `/api/admin/users/${admin.user.id}`, { token: other.token, body: { is_active: false } })).status).toBe(200);
    expect((await dashboardApi(cookie)).status).toBe(401);
  });
});
