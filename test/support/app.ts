import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createKnex, WEB_POOL } from '../../src/db/knex.js';
import { createRedis, waitForReady } from '../../src/redis/connection.js';
import { buildServices, type ServiceOptions, type Services } from '../../src/services.js';
import type Router from '@koa/router';
import { apiRouters, createApp } from '../../src/app.js';
import { serve } from '../../src/http/serve.js';
import { createUser } from '../../src/auth/users.js';
import type { Role } from '../../src/db/models.js';
import { forgetContract, watchContract } from './contract.js';
import type { CpuWork } from '../../src/cpu/work.js';

export const uniqueId = () => randomBytes(6).toString('hex');

/**
 * The scrypt cost of the users tests create directly (their hash records it, so logging in as them costs as
 * little): 1 MiB instead of 128 MiB per hash. Users created through the API still get the real cost.
 */
export const FIXTURE_PASSWORD_COST = { N: 2 ** 10, r: 8, p: 1 };

/** The run's database and a key prefix of this app's own, so apps in one run never share counters. */
export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: inject('databaseUrl'),
    REDIS_URL: inject('redisUrl'),
    REDIS_KEY_PREFIX: `${inject('redisPrefix')}${uniqueId()}:`,
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
    ENCRYPTION_KEY: 'test-encryption-key-test-encryption-key-01',
    LOG_LEVEL: 'info',
    ...overrides,
  });
}

export interface Response<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (for malformed bodies). */
  raw?: string;
  headers?: Record<string, string>;
}

export class TestApp {
  constructor(
    readonly url: string,
    readonly services: Services,
    /** Every log line the app wrote. */
    readonly logs: string[],
    private readonly server: Server,
  ) {}

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Response<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined = options.raw;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    } else if (options.raw !== undefined) {
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${this.url}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed as T, headers: res.headers, text };
  }

  async createUser(role: Role = 'member') {
    const email = `user-${uniqueId()}@example.test`;
    const password = `pw-${uniqueId()}`;
    const user = await createUser(this.services.models, { email, password, role, passwordCost: FIXTURE_PASSWORD_COST });
    return { user, email, password };
  }

  async login(email: string, password: string) {
    const res = await this.request('POST', '/api/auth/login', { body: { email, password } });
    if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
    return res.body as { access_token: string; refresh_token: string };
  }

  /** A user with a JWT, ready to call the API. */
  async signedInUser(role: Role = 'member') {
    const created = await this.createUser(role);
    const { access_token } = await this.login(created.email, created.password);
    return { ...created, token: access_token };
  }

  async close() {
    forgetContract(this.url);
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const stream of this.services.openStreams) stream.close();
    this.server.closeAllConnections();
    await closed;
    await this.services.usage.stop();
    await Promise.all(this.services.queues.map((queue) => queue.close())).catch(() => {});
    this.services.redis.disconnect();
    this.services.subscriber.disconnect();
    this.services.reader.disconnect();
    await this.services.knex.destroy();
  }
}

export async function startTestApp(
  options: ServiceOptions & {
    env?: Record<string, string>;
    waitForRedis?: boolean;
    poolMax?: number;
    /** CPU work on request data: inline when absent, as in a process without a pool. */
    cpu?: CpuWork;
    /** Routes added after the API's own (tests of the error edge). */
    extraRoutes?: (services: Services) => Router[];
  } = {},
): Promise<TestApp> {
  const config = testConfig(options.env);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger(config.logLevel, 'web', sink);
  const knex = createKnex(config.databaseUrl, { ...WEB_POOL, poolMax: options.poolMax ?? 5 });
  const redis = createRedis(config.redis, 'web-commands', 'test-web');
  const subscriber = createRedis(config.redis, 'subscriber', 'test-web-subscriber');
  const reader = createRedis(config.redis, 'stream-reader', 'test-web-reader');
  if (options.waitForRedis !== false) await waitForReady(redis);
  const services = buildServices({ config, knex, redis, subscriber, reader, logger, cpu: options.cpu }, options);
  const routers = [...apiRouters(services), ...(options.extraRoutes?.(services) ?? [])];
  const server = serve(createApp(services, routers), 0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  await watchContract(url);
  return new TestApp(url, services, logs, server);
}
