import { exec, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { Proc } from './support/stack.js';
import { ADMIN_URL, asAdmin } from './support/database.js';

/**
 * `npm start`'s first boot on a port other than 3000, on a fresh database: the agentctl line it
 * prints works as printed, from a shell that knows nothing of that port; the children's log lines
 * carry `[web]` and `[worker]`; and agentctl pointed at nothing names the address it tried.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const cli = fileURLToPath(new URL('../dist/src/cli.js', import.meta.url));
const databaseName = `ap_test_boot_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
let dev: Proc;
let port: number;

/** A free port, not 3000: asked of the system, then released for dev.js to take. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** This process's environment without anything that would tell agentctl the address or key. */
function shellEnv(): Record<string, string> {
  const env = { ...process.env } as Record<string, string>;
  for (const name of ['PORT', 'AGENT_PLATFORM_URL', 'AGENT_PLATFORM_API_KEY', 'NODE_ENV']) delete env[name];
  return env;
}

beforeAll(async () => {
  port = await freePort();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${databaseName}`;
  const env = {
    ...shellEnv(),
    PORT: String(port),
    DATABASE_URL: url.toString(),
    REDIS_URL: inject('redisUrl'),
    REDIS_KEY_PREFIX: `${inject('redisPrefix')}boot:`,
    LOCAL_MODEL_TOKEN_DELAY_MS: '0',
  };
  dev = new Proc(spawn(process.execPath, ['dist/src/dev.js'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  await dev.waitFor(/\[web\].*web listening/, 90_000);
  await dev.waitFor(/\[worker\].*worker ready/, 90_000);
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  await asAdmin((client) => client.query(`drop database if exists "${databaseName}" with (force)`));
});

const output = () => dev.output.join('');

/** A command run again after a 429 (a busy shared machine), as a well-behaved client would; any other failure fails. */
async function asAClientWould<T>(command: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await command();
    } catch (err) {
      if (attempt >= attempts || !/\b429 /.test(String((err as { stderr?: string }).stderr))) throw err;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

describe('first boot on a port other than 3000', () => {
  it('prints an agentctl line carrying the real address, and that line, run as printed, answers', async () => {
    expect(port).not.toBe(3000);
    const printed = output()
      .split('\n')
      .find((line) => line.includes('npx agentctl run'));
    expect(printed).toContain(`AGENT_PLATFORM_URL=http://localhost:${port} `);
    const { stdout } = await asAClientWould(() => promisify(exec)(printed!.trim(), { cwd: root, env: shellEnv() }));
    expect(stdout).toContain('84');
    expect(stdout).toContain('[succeeded');
  }, 120_000);

  it('prefixes every line the children wrote with [web] or [worker]', () => {
    const lines = output().split('\n');
    // dev.js's own lines (migrations, the first-boot block) come before the children start.
    const childLines = lines.slice(lines.findIndex((line) => line.includes('npx agentctl run')) + 1).filter((line) => line.trim());
    expect(childLines.length).toBeGreaterThan(2);
    for (const line of childLines) expect(line).toMatch(/^\[(web|worker)\] /);
  });

  it('agentctl that reaches nothing names the address it tried and what to check', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const failed = await promisify(execFile)(process.execPath, [cli, 'run', 'hi', '--url', nowhere, '--key', 'svc_unused'], { env: shellEnv() }).catch((err: { stderr: string; code: number }) => err);
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain(`could not reach the platform at ${nowhere} (ECONNREFUSED)`);
    expect((failed as { stderr: string }).stderr).toContain('AGENT_PLATFORM_URL');
  }, 60_000);
});
