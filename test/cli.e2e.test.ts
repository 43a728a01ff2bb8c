import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';

const run = promisify(execFile);
const cli = fileURLToPath(new URL('../dist/src/cli.js', import.meta.url));
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.stop());

const agentctl = (args: string[]) => run(process.execPath, [cli, ...args], { env: { ...process.env, ...stack.env } });

describe('agentctl', () => {
  it('creates a user and a key (printed once), then runs a question and streams 84', async () => {
    const email = `cli-${Date.now()}@example.test`;
    const created = await agentctl(['users:create', '--email', email, '--password', 'long-enough-pw', '--role', 'member']);
    expect(created.stdout).toContain(`created member ${email}`);
    const keyOut = await agentctl(['keys:create', '--email', email, '--name', 'cli', '--scopes', 'chat']);
    const key = keyOut.stdout.trim().split("\n").at(-1)!;
    expect(key).toMatch(/^svc_[0-9A-Za-z]{49}$/);
    const row = await stack.knex('api_keys').where({ key_prefix: key.slice(0, 8) }).first();
    expect(row).toMatchObject({ name: 'cli', scopes: 'chat' });
    expect(JSON.stringify(row)).not.toContain(key);

    const answered = await agentctl(['run', 'What is 12*7?', '--url', stack.url, '--key', key]);
    expect(answered.stdout).toContain('calculator');
    expect(answered.stdout).toContain('The result of 12*7 is 84.');
    expect(answered.stdout).toContain('[succeeded');

    const dag = await agentctl(['run', '--mode', 'dag', 'What is 2+2 and what is 3*3?', '--url', stack.url, '--key', key]);
    expect(dag.stdout).toContain('plan: q1 What is 2+2 | q2 what is 3*3');
  });

  it('runs as the command the README names after a plain build: the compiled file is executable, and npx finds it', async () => {
    const direct = await run(cli, ['help'], { env: { ...process.env, ...stack.env } }).catch((err: { code?: unknown; stderr?: string; stdout?: string }) => err);
    expect(String(direct.stderr ?? '') + String(direct.stdout ?? '')).toMatch(/usage|agentctl/i);
    expect(String(direct.stderr ?? '')).not.toMatch(/Permission denied|EACCES/);
    const viaNpx = await run('npx', ['--no-install', 'agentctl', 'help'], { cwd: fileURLToPath(new URL('..', import.meta.url)), env: { ...process.env, ...stack.env } }).catch((err: { stderr?: string; stdout?: string }) => err);
    expect(String(viaNpx.stderr ?? '')).not.toMatch(/Permission denied/);
    expect(String(viaNpx.stderr ?? '') + String(viaNpx.stdout ?? '')).toMatch(/usage|agentctl/i);
  });

  it('reports a clear error and a non-zero exit for bad input', async () => {
    await expect(agentctl(['users:create', '--email', 'x@y.z'])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--password') });
    await expect(agentctl(['keys:create', '--email', 'nobody@example.test', '--name', 'n', '--scopes', 'root'])).rejects.toMatchObject({ stderr: expect.stringContaining('--scopes') });
    await expect(agentctl(['run', 'hi', '--url', stack.url, '--key', 'svc_bad'])).rejects.toMatchObject({ stderr: expect.stringContaining('invalid_token') });
    await expect(agentctl(['inject', '--conversation', '00000000-0000-4000-8000-000000000000', 'x', '--url', stack.url, '--key', (await stack.user()).key])).rejects.toMatchObject({
      stderr: expect.stringContaining('not_found'),
    });
  });
});
