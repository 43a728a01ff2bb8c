import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';

/** agentctl for operators without a browser: users:list, users:disable, keys:revoke, audit (acting on Postgres and Redis directly). */
const run = promisify(execFile);
const cli = fileURLToPath(new URL('../dist/src/cli.js', import.meta.url));
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ webs: 1, workers: 0 });
});
afterAll(() => stack.stop());

const agentctl = (args: string[]) => run(process.execPath, [cli, ...args], { env: { ...process.env, ...stack.env } });
const verify = async (key: string) => (await fetch(`${stack.url}/api/auth/verify`, { headers: { authorization: `Bearer ${key}` } })).status;
/** The invalidation travels by pub/sub: ask until 401, well within the cache's 30 s TTL, so only the message can make it. */
async function refusedSoon(key: string, deadlineMs = 5000): Promise<number> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const status = await verify(key);
    if (status === 401 || Date.now() > deadline) return status;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('agentctl administration', () => {
  it('lists users, disables one (their warm key refused at once), revokes a key, and prints the audit log', async () => {
    const a = await stack.user();
    const b = await stack.user();
    expect(await verify(a.key)).toBe(200);
    expect(await verify(b.key)).toBe(200);

    const listed = await agentctl(['users:list', '--q', a.user.email]);
    expect(listed.stdout).toContain(`${a.user.id}\t${a.user.email}\tmember\tactive`);
    expect(listed.stdout).toContain('1 user(s)');

    const disabled = await agentctl(['users:disable', '--email', a.user.email]);
    expect(disabled.stdout).toContain(`disabled ${a.user.email}`);
    // The web process cached the key as live; the CLI's invalidation reached it (its cache TTL is 30 s).
    expect(await refusedSoon(a.key)).toBe(401);
    expect((await agentctl(['users:list', '--active', 'false', '--q', a.user.email])).stdout).toContain('disabled');

    const revoked = await agentctl(['keys:revoke', '--prefix', b.key.slice(0, 8)]);
    expect(revoked.stdout).toContain(`revoked key "test" (${b.key.slice(0, 8)}…`);
    expect(await refusedSoon(b.key)).toBe(401);

    const audit = await agentctl(['audit', '--limit', '5']);
    const lines = audit.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`\\tapi_key\\.update\\t-/cli\\tapi_key:`));
    expect(lines[1]).toMatch(new RegExp(`\\tuser\\.disable\\t-/cli\\tuser:${a.user.id}\\t`));
    expect(audit.stdout).not.toContain(b.key);
    const filtered = await agentctl(['audit', '--action', 'user.disable', '--target', a.user.id]);
    expect(filtered.stdout).toContain('1 of 1 entry');
  });

  it('refuses bad input with a clear message and exit code 2', async () => {
    await expect(agentctl(['users:disable'])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--email or --id') });
    await expect(agentctl(['users:disable', '--id', 'not-a-uuid'])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--id') });
    await expect(agentctl(['keys:revoke', '--prefix', 'svc_none'])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('no API key') });
    await expect(agentctl(['audit', '--from', 'yesterday'])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--from') });
    await expect(agentctl(['users:list', '--size', '1000'])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--size') });
  });
});
