import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestApp, type TestApp } from './support/app.js';
import { EVENT_TYPES } from '../src/shared/events.js';
import { apiRoutes } from '../src/app.js';
import { openApiPath } from '../src/routes/openapi.js';

/**
 * The spec (v0.8.9), kept in the repository so a checkout is self-contained; where shared/ sits beside
 * the checkout (developers' machines), the copy is checked against it, so it cannot go stale unseen.
 */
const specPath = fileURLToPath(new URL('./fixtures/agent-platform-api.md', import.meta.url));
const sharedSpecPath = fileURLToPath(new URL('../../shared/spec/agent-platform-api.md', import.meta.url));

type Document = { openapi: string; info: { version: string }; paths: Record<string, Record<string, any>>; components: any };

/**
 * The endpoints the spec names: its `### METHOD /path` headings, and the `METHOD /path` mentions of
 * its named-only list and scope table. Path parameters are compared by position, not name.
 */
function specEndpoints(markdown: string): string[] {
  const found = new Set<string>();
  const endpoints = markdown.slice(markdown.indexOf('## Endpoints'), markdown.indexOf('## Events'));
  const service = endpoints.replace(/### Model gateway endpoints[\s\S]*?(?=\n## )/, '');
  for (const match of service.matchAll(/(?:^### |`|\| )(GET|POST|PUT|PATCH|DELETE) (\/api\/[^\s`|,]*)/gm)) found.add(`${match[1]} ${match[2]}`);
  return [...found];
}

const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}');

describe('the OpenAPI document', () => {
  let app: TestApp;
  let document: Document;

  beforeAll(async () => {
    app = await startTestApp();
    const res = await app.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    document = res.body;
  });
  afterAll(() => app?.close());

  it('is valid OpenAPI 3.1, version 0.8.9', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('0.8.9');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every declared route with its usual status, each operation with a success and a unique id', () => {
    const declared = apiRoutes(app.services);
    // The OpenAI-compatible endpoints follow OpenAI's published contract instead (DESIGN §16).
    const routes = declared.filter((route) => !route.undocumented);
    expect(declared.filter((route) => route.undocumented).map((route) => route.path).every((path) => path.startsWith('/v1/'))).toBe(true);
    expect(document.paths['/v1/chat/completions']).toBeUndefined();
    expect(routes.length).toBe(Object.values(document.paths).reduce((n, ops) => n + Object.keys(ops).length, 0));
    for (const route of routes) {
      const op = document.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op.responses[String(route.status ?? 200)], `${route.method} ${route.path} documents its usual status`).toBeDefined();
      if (route.streams) expect(Object.keys(op.responses['200'].content)).toEqual(['text/event-stream']);
    }
    const ids = Object.values(document.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('reads spec 0.8.9, the same as shared/ where it sits beside the checkout', () => {
    const spec = readFileSync(specPath, 'utf8');
    expect(spec).toContain('0.8.9');
    if (existsSync(sharedSpecPath)) expect(spec).toBe(readFileSync(sharedSpecPath, 'utf8'));
  });

  it('has every endpoint the spec names', () => {
    const expected = specEndpoints(readFileSync(specPath, 'utf8'));
    expect(expected).toEqual(expect.arrayContaining(['POST /api/react', 'GET /api/agents/{id}', 'POST /api/knowledge-bases/{id}/retrieve']));
    // The spec's endpoint headings, its named-only list and its scope table: at least these.
    expect(expected.length).toBeGreaterThanOrEqual(12);
    const documented = new Set(Object.entries(document.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${shape(path)}`)));
    const missing = expected.filter((endpoint) => !documented.has(endpoint.replace(/ (.*)$/, (_, path: string) => ` ${shape(path)}`)));
    expect(missing).toEqual([]);
  });

  it('documents connector CRUD and administrative endpoints, which the spec names without paths', () => {
    for (const endpoint of ['GET /api/connectors', 'POST /api/connectors', 'GET /api/connectors/{id}', 'PATCH /api/connectors/{id}', 'DELETE /api/connectors/{id}']) {
      const [method, path] = endpoint.split(' ') as [string, string];
      expect(document.paths[path]?.[method.toLowerCase()], endpoint).toBeDefined();
    }
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/api/admin/')).length).toBeGreaterThan(5);
  });

  it('describes the streaming endpoints as text/event-stream with the event table', () => {
    for (const [path, method] of [['/api/react', 'post'], ['/api/dag', 'post'], ['/api/runs/{id}/events', 'get']] as const) {
      const ok = document.paths[path]![method].responses['200'];
      expect(Object.keys(ok.content)).toEqual(['text/event-stream']);
      for (const type of EVENT_TYPES) expect(ok.description, `${path} describes ${type}`).toContain(`| \`${type}\` |`);
      expect(ok.headers['X-Run-Id'].required).toBe(true);
    }
  });

  it('describes query parameters as the integers and booleans their text spells, with bounds and defaults (DESIGN §16)', () => {
    const query = (path: string, name: string) => document.paths[path]!.get.parameters.find((p: any) => p.in === 'query' && p.name === name)?.schema;
    expect(query('/api/agents', 'page')).toEqual({ type: 'integer', minimum: 1, maximum: 999_999_999_999_999, default: 1 });
    expect(query('/api/agents', 'size')).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    expect(query('/api/runs/{id}', 'wait')).toEqual({ type: 'integer', minimum: 0, maximum: 60 });
    expect(query('/api/admin/users', 'is_active')).toEqual({ type: 'boolean' });
    const parameters = Object.values(document.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.parameters ?? []));
    // None is left described as the text of an integer (src/http/validation.ts's integerText) or of a boolean.
    const asText = parameters.filter(({ schema }: any) => schema.pattern === String.raw`^[+-]?\d{1,15}$` || String(schema.enum) === 'true,false');
    expect(asText).toEqual([]);
  });

  it('states who may call each operation and what errors it answers (DESIGN §4)', () => {
    const { securitySchemes, responses } = document.components;
    expect(Object.values(securitySchemes).map((s: any) => s.scheme)).toEqual(['bearer', 'bearer']);
    expect(document.paths['/api/auth/login']!.post.security).toEqual([]);
    expect(document.paths['/api/agents']!.get.security).toEqual([{ accessToken: [] }, { apiKey: [] }]);
    expect(responses['401'].headers['WWW-Authenticate'].required).toBe(true);
    const bodyOf = (status: number) => {
      const schema = responses[status].content['application/json'].schema;
      return schema.$ref ? document.components.schemas[schema.$ref.split('/').at(-1)] : schema;
    };
    expect(bodyOf(422).required).toEqual(['detail']);
    expect(responses['429'].headers['Retry-After'].required).toBe(true);
    expect(Object.keys(bodyOf(410).properties).sort()).toEqual(['answer', 'error', 'message', 'status', 'usage']);
    expect(Object.keys(document.paths['/api/agents/{id}']!.get.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '404', '422', '500', '503']));
  });
});
