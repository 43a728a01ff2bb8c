import { describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { loadConfig, ConfigError } from '../src/config.js';
import { generateApiKey, isWellFormedApiKey } from '../src/auth/secrets.js';
import { authorize, type AccessRule } from '../src/auth/guard.js';
import type { Principal } from '../src/auth/authenticator.js';
import { canGrant } from '../src/auth/scopes.js';
import { hashPassword, verifyPassword } from '../src/auth/passwords.js';
import { parseInput, paginationQuery } from '../src/http/validation.js';
import { ValidationError } from '../src/shared/errors.js';
import { redisKeys } from '../src/shared/redis-keys.js';

describe('config', () => {
  it('has working defaults in development', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.model.provider).toBe('local');
    expect(config.workerConcurrency).toBe(50);
    expect(config.warnings.join(' ')).toContain('JWT_SECRET');
    expect(config.trustProxyHops).toBe(0);
    expect(config.databasePoolMax).toEqual({ web: 10, worker: 20 });
    expect(config.model.dagMaxNodes).toBe(16);
  });

  it('keeps a finished run\'s stream RUN_STREAM_TTL_S seconds (an hour unless told)', () => {
    expect(loadConfig({}).runs.streamTtlSeconds).toBe(3600);
    expect(loadConfig({ RUN_STREAM_TTL_S: '2' }).runs.streamTtlSeconds).toBe(2);
  });

  it('takes a gateway without a key (Ollama, vLLM): GATEWAY_API_KEY is optional, and an empty one counts as none', () => {
    const keyless = loadConfig({ MODEL_PROVIDER: 'gateway', GATEWAY_URL: 'http://127.0.0.1:11434', GATEWAY_MODEL: 'llama3.2' });
    expect(keyless.model.gateway).toMatchObject({ url: 'http://127.0.0.1:11434', model: 'llama3.2' });
    expect(keyless.model.gateway.apiKey).toBeUndefined();
    expect(loadConfig({ GATEWAY_URL: 'http://gw', GATEWAY_API_KEY: '' }).model.gateway.apiKey).toBeUndefined();
    expect(loadConfig({ GATEWAY_URL: 'http://gw', GATEWAY_API_KEY: 'sk-1' }).model.gateway.apiKey).toBe('sk-1');
  });

  it('trusts one proxy hop in production (Heroku’s router) unless told otherwise', () => {
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), ENCRYPTION_KEY: 'y'.repeat(32) };
    expect(loadConfig(production).trustProxyHops).toBe(1);
    expect(loadConfig({ ...production, TRUST_PROXY_HOPS: '0' }).trustProxyHops).toBe(0);
    expect(loadConfig({ TRUST_PROXY_HOPS: '2' }).trustProxyHops).toBe(2);
  });

  it('sizes pools per role: DATABASE_POOL_MAX for both, the role-specific variables first', () => {
    expect(loadConfig({ WORKER_CONCURRENCY: '4' }).databasePoolMax).toEqual({ web: 10, worker: 4 });
    expect(loadConfig({ DATABASE_POOL_MAX: '7' }).databasePoolMax).toEqual({ web: 7, worker: 7 });
    expect(loadConfig({ DATABASE_POOL_MAX: '7', WEB_DATABASE_POOL_MAX: '3' }).databasePoolMax).toEqual({ web: 3, worker: 7 });
    expect(loadConfig({ WORKER_DATABASE_POOL_MAX: '30' }).databasePoolMax).toEqual({ web: 10, worker: 30 });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
    [{ MODEL_PROVIDER: 'openai' }, 'MODEL_PROVIDER'],
    [{ WORKER_CONCURRENCY: '0' }, 'WORKER_CONCURRENCY'],
    [{ NODE_ENV: 'production' }, 'JWT_SECRET'],
    [{ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) }, 'ENCRYPTION_KEY'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET'],
    [{ MODEL_PROVIDER: 'gateway' }, 'GATEWAY_URL'],
    [{ MODEL_PROVIDER: 'gateway', GATEWAY_URL: 'http://gw', GATEWAY_API_KEY: 'k' }, 'GATEWAY_MODEL'],
    [{ GATEWAY_URL: 'http://localhost:11434/v1' }, 'GATEWAY_URL is the base address without /v1: use http://localhost:11434'],
    [{ GATEWAY_DEEP_RESEARCH_MODELS: '(' }, 'GATEWAY_DEEP_RESEARCH_MODELS'],
    [{ GATEWAY_IDLE_TIMEOUT_MS: '5' }, 'GATEWAY_IDLE_TIMEOUT_MS'],
    [{ ADMIN_EMAIL: 'a@b.co' }, 'ADMIN_EMAIL'],
    [{ TRUST_PROXY_HOPS: '-1' }, 'TRUST_PROXY_HOPS'],
    [{ DATABASE_POOL_MAX: '0' }, 'DATABASE_POOL_MAX'],
    [{ WEB_DATABASE_POOL_MAX: 'many' }, 'WEB_DATABASE_POOL_MAX'],
    [{ DAG_MAX_NODES: '1' }, 'DAG_MAX_NODES'],
    [{ RUN_STREAM_TTL_S: '0' }, 'RUN_STREAM_TTL_S'],
    [{ RUN_STREAM_TTL_S: '1h' }, 'RUN_STREAM_TTL_S'],
    [{ RUN_STREAM_TTL_S: String(7 * 24 * 3600 + 1) }, 'RUN_STREAM_TTL_S'],
  ])('refuses %j naming %s in one line', (env, name) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(name);
    expect((error as Error).message).not.toContain('\n');
  });
});

describe('API key format', () => {
  it('generates well-formed keys whose checksum catches a typo', () => {
    for (let i = 0; i < 50; i++) {
      const key = generateApiKey();
      expect(isWellFormedApiKey(key)).toBe(true);
      const flipped = key.slice(0, 10) + (key[10] === 'a' ? 'b' : 'a') + key.slice(11);
      expect(isWellFormedApiKey(flipped)).toBe(false);
    }
    expect(isWellFormedApiKey('svc_')).toBe(false);
    expect(isWellFormedApiKey(`tok_${generateApiKey().slice(4)}`)).toBe(false);
  });
});

describe('scope rules', () => {
  const principal = (scopes: Principal['scopes'], role: Principal['user']['role'] = 'member'): Principal => ({
    user: { id: 'u', email: 'e', role },
    kind: 'api_key',
    scopes,
    expiresAt: null,
    rateLimitRpm: null,
    budgets: [],
  });
  const cases: [Principal, AccessRule, boolean][] = [
    [principal(null), {}, true],
    [principal(['chat']), { scope: 'chat' }, true],
    [principal(['chat']), { scope: 'kb' }, false],
    [principal(['chat']), {}, false],
    [principal(['kb']), { anyKey: true }, true],
    [principal(null, 'restricted'), { writes: true }, false],
    [principal(null, 'restricted'), { scope: 'chat' }, true],
    [principal(null, 'member'), { role: 'admin' }, false],
    [principal(['admin'], 'admin'), { scope: 'admin', role: 'admin' }, true],
  ];
  it.each(cases)('%j calling %j → allowed=%s', (who, rule, allowed) => {
    if (allowed) expect(() => authorize(who, rule)).not.toThrow();
    else expect(() => authorize(who, rule)).toThrow(/./);
  });

  it('never grants more than held', () => {
    expect(canGrant(['chat'], ['chat', 'kb'])).toBe(false);
    expect(canGrant(['chat'], null)).toBe(false);
    expect(canGrant(['chat', 'kb'], ['kb'])).toBe(true);
    expect(canGrant(null, null)).toBe(true);
  });
});

describe('passwords', () => {
  it('hashes with scrypt and verifies', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash.startsWith('scrypt$131072$8$1$')).toBe(true);
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horsf', hash)).toBe(false);
    expect(await verifyPassword('x', 'garbage')).toBe(false);
  });
});

describe('validation shape', () => {
  it('reports several problems at once with FastAPI locations', () => {
    let error: ValidationError | undefined;
    try {
      parseInput(paginationQuery, { page: '0', size: 'many' }, 'query');
    } catch (err) {
      error = err as ValidationError;
    }
    expect(error?.body()).toEqual({
      detail: [
        { loc: ['query', 'page'], msg: 'Input should be greater than or equal to 1', type: 'greater_than_equal', input: '0', ctx: { ge: 1 } },
        { loc: ['query', 'size'], msg: 'Input should be a valid integer, unable to parse string as an integer', type: 'int_parsing', input: 'many' },
      ],
    });
  });

  it('names a literal’s allowed values', () => {
    const schema = v.object({ mode: v.picklist(['react', 'dag']) });
    expect(() => parseInput(schema, { mode: 'x' }, 'body')).toThrow(ValidationError);
    try {
      parseInput(schema, { mode: 'x' }, 'body');
    } catch (err) {
      expect((err as ValidationError).detail[0]).toMatchObject({ type: 'literal_error', msg: "Input should be 'react' or 'dag'" });
    }
  });
});
