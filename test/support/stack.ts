import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createKnex } from '../../src/db/knex.js';
import { createRedis } from '../../src/redis/connection.js';
import { createLogger } from '../../src/logger.js';
import { buildIdentityServices } from '../../src/services.js';
import { createUser } from '../../src/auth/users.js';
import type { Role } from '../../src/db/models.js';
import { FIXTURE_PASSWORD_COST, uniqueId } from './app.js';
import { forgetContract, watchContract } from './contract.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** A built process (web or worker) of the stack, with its output kept for assertions. */
export class Proc {
  readonly output: string[] = [];
  readonly exited: Promise<number | null>;
  constructor(readonly child: ChildProcess) {
    // A test process that ends without stopping its stack (a timeout, a crash) takes its processes with it: left
    // running, they would compete with every later file for the machine.
    const reap = () => child.kill('SIGKILL');
    process.once('exit', reap);
    child.once('exit', () => process.off('exit', reap));
    child.stdout!.on('data', (chunk: Buffer) => this.output.push(chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => this.output.push(chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  waitFor(pattern: RegExp, timeoutMs = 40_000): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(this.output.join(''));
        if (match) {
          cleanup();
          resolve(match);
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting for ${pattern}; output:\n${this.output.join('').slice(-2000)}`));
      }, timeoutMs);
      const onExit = () => {
        cleanup();
        reject(new Error(`process exited while waiting for ${pattern}; output:\n${this.output.join('').slice(-2000)}`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        this.child.stdout!.off('data', check);
        this.child.off('exit', onExit);
      };
      this.child.stdout!.on('data', check);
      this.child.once('exit', onExit);
      check();
    });
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}

/** `stream` options that kill `proc` (SIGKILL) at the stream's first token and end the client's stream there. */
export function killAtFirstToken(proc: Proc) {
  const controller = new AbortController();
  const onEvent = (event: { type: string }) => {
    if (event.type !== 'token' || controller.signal.aborted) return;
    proc.child.kill('SIGKILL');
    controller.abort();
  };
  return { signal: controller.signal, onEvent };
}

export interface StackOptions {
  webs?: number;
  workers?: number;
  env?: Record<string, string>;
}

/** Built web and worker processes on the run's database with a key prefix of their own. */
export class Stack {
  readonly webs: Proc[] = [];
  readonly workers: Proc[] = [];
  readonly urls: string[] = [];
  readonly env: Record<string, string>;
  readonly knex;
  readonly redis;
  readonly identity;

  constructor(options: StackOptions = {}) {
    this.env = {
      NODE_ENV: 'test',
      DATABASE_URL: inject('databaseUrl'),
      REDIS_URL: inject('redisUrl'),
      REDIS_KEY_PREFIX: `${inject('redisPrefix')}${uniqueId()}:`,
      JWT_SECRET: 'stack-secret-stack-secret-stack-secret-01',
      ENCRYPTION_KEY: 'stack-encryption-key-stack-encryption-k',
      LOG_LEVEL: 'info',
      LOCAL_MODEL_TOKEN_DELAY_MS: '0',
      PORT: '0',
      ...options.env,
    };
    const config = loadConfig(this.env);
    this.knex = createKnex(config.databaseUrl, { poolMax: 4 });
    this.redis = createRedis(config.redis, 'patient', 'test-stack');
    this.identity = buildIdentityServices({ config, knex: this.knex, redis: this.redis, logger: createLogger('silent', 'test') });
  }

  get url(): string {
    return this.urls[0]!;
  }

  private spawn(script: string, env: Record<string, string> = {}): Proc {
    return new Proc(spawn(process.execPath, [script], { cwd: root, env: { ...process.env, ...this.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  async startWeb(): Promise<Proc> {
    const web = this.spawn('dist/src/server.js');
    const match = await web.waitFor(/"port":(\d+),"msg":"web listening"/);
    const url = `http://127.0.0.1:${match[1]}`;
    await watchContract(url);
    this.webs.push(web);
    this.urls.push(url);
    return web;
  }

  async startWorker(env: Record<string, string> = {}): Promise<Proc> {
    const worker = this.spawn('dist/workers/main.js', env);
    await worker.waitFor(/worker ready/);
    this.workers.push(worker);
    return worker;
  }

  async start(options: StackOptions = {}): Promise<this> {
    await Promise.all([
      ...Array.from({ length: options.webs ?? 1 }, () => this.startWeb()),
      ...Array.from({ length: options.workers ?? 1 }, () => this.startWorker()),
    ]);
    return this;
  }

  async user(role: Role = 'member') {
    const email = `stack-${uniqueId()}@example.test`;
    const password = `pw-${uniqueId()}`;
    const user = await createUser(this.identity.models, { email, password, role, passwordCost: FIXTURE_PASSWORD_COST });
    const { key } = await this.identity.apiKeys.create(user.id, { name: 'test' });
    return { user, key, email, password };
  }

  /** A JSON request to the first web as `token`: the status and the parsed body. */
  async api(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }

  async stop(): Promise<void> {
    for (const url of this.urls) forgetContract(url);
    await Promise.all([...this.webs, ...this.workers].map((p) => p.stop()));
    this.redis.disconnect();
    await this.knex.destroy();
  }
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  return new Stack(options).start(options);
}
