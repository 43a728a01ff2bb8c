import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

/**
 * The login throttle behind one trusted proxy hop (TRUST_PROXY_HOPS=1, as on Heroku, whose router
 * appends the address it saw to X-Forwarded-For). Failures from anywhere never lock the owner out.
 */
let app: TestApp;
let direct: TestApp;
const limits = { perAccountAddress: 3, perAddress: 6, perAccount: 5, windowSeconds: 60 };
beforeAll(async () => {
  [app, direct] = await Promise.all([
    startTestApp({ throttle: limits, env: { TRUST_PROXY_HOPS: '1' } }),
    startTestApp({ throttle: limits, env: { TRUST_PROXY_HOPS: '0' } }),
  ]);
});
afterAll(() => Promise.all([app.close(), direct.close()]));

let counter = 0;
/** An address as the proxy saw it; a client may put anything to its left. */
const address = () => `203.0.113.${++counter}`;
const login = (target: TestApp, email: string, password: string, forwardedFor?: string) =>
  target.request('POST', '/api/auth/login', { body: { email, password }, headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} });

describe('login throttle', () => {
  it('failures from elsewhere never refuse the owner’s right password from an address with no failures', async () => {
    const { email, password } = await app.createUser();
    const attacker = address();
    for (let i = 0; i < limits.perAccountAddress; i++) expect((await login(app, email, 'guess', attacker)).status).toBe(401);
    // The attacker's address is now refused for this account, even with the right password…
    const refused = await login(app, email, password, attacker);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'rate_limited', message: expect.any(String) });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // …while the owner, somewhere else, logs in.
    expect((await login(app, email, password, address())).status).toBe(200);
  });

  it('the client-written part of X-Forwarded-For changes nothing: the entry the proxy appended is the address', async () => {
    const { email, password } = await app.createUser();
    const attacker = address();
    for (let i = 0; i < limits.perAccountAddress; i++) {
      expect((await login(app, email, 'guess', `10.9.9.${i}, 198.51.100.${i}, ${attacker}`)).status).toBe(401);
    }
    expect((await login(app, email, password, `10.0.0.77, ${attacker}`)).status).toBe(429);
    expect((await login(app, email, password, `${attacker}, 192.0.2.200`)).status).toBe(200);
  });

  it('one address guessing across many accounts is refused for all of them', async () => {
    const attacker = address();
    for (let i = 0; i < limits.perAddress; i++) {
      const { email } = await app.createUser();
      expect((await login(app, email, 'guess', attacker)).status).toBe(401);
    }
    const { email, password } = await app.createUser();
    expect((await login(app, email, password, attacker)).status).toBe(429);
    expect((await login(app, email, password, address())).status).toBe(200);
  });

  it('past the account-wide limit, a distributed guesser gets one try per address; the owner still logs in', async () => {
    const { email, password } = await app.createUser();
    const guessers = Array.from({ length: limits.perAccount }, () => address());
    for (const guesser of guessers) expect((await login(app, email, 'guess', guesser)).status).toBe(401);
    // Every address that failed on the account is refused now, though none reached its own limit…
    for (const guesser of guessers) expect((await login(app, email, password, guesser)).status).toBe(429);
    // …a fresh address may try once…
    const fresh = address();
    expect((await login(app, email, 'guess', fresh)).status).toBe(401);
    expect((await login(app, email, 'guess', fresh)).status).toBe(429);
    // …and the owner, from an address with no failures, is never refused.
    expect((await login(app, email, password, address())).status).toBe(200);
  });

  it('a success clears that address’s failures for the account', async () => {
    const { email, password } = await app.createUser();
    const owner = address();
    // Without the clearing, the second round's success would meet the per-(account, address) limit.
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < limits.perAccountAddress - 1; i++) expect((await login(app, email, 'typo', owner)).status).toBe(401);
      expect((await login(app, email, password, owner)).status).toBe(200);
    }
  });

  it('with TRUST_PROXY_HOPS=0, X-Forwarded-For is ignored: the socket address counts', async () => {
    const { email, password } = await direct.createUser();
    for (let i = 0; i < limits.perAccountAddress; i++) expect((await login(direct, email, 'guess', `198.51.100.${i}`)).status).toBe(401);
    expect((await login(direct, email, password, '192.0.2.1')).status).toBe(429);
  });

  it('every refusal is logged with its cause', () => {
    const refusals = app.logs.filter((line) => line.includes('"status":429'));
    expect(refusals.length).toBeGreaterThan(0);
    for (const line of refusals) expect(JSON.parse(line)).toMatchObject({ msg: 'request refused', cause: expect.stringMatching(/^login throttle: /) });
  });
});
