import * as v from 'valibot';
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig, type JsonSchema } from '@valibot/to-json-schema';
import type { MediaResponse, Route } from '../auth/route.js';
import { errorBodies } from '../http/error-records.js';
import { namedRecords } from './named-records.js';
import { isJsonObjectSchema, type SpellsMetadata } from '../http/validation.js';
import { API_VERSION } from '../shared/api-version.js';

/**
 * The OpenAPI 3.1 document (DESIGN §12), derived from the route declarations: the same valibot
 * schemas that validate requests describe them here, and each route's declared responses and
 * error statuses describe what it answers. Built once per app, on the first request for it.
 */


type Json = Record<string, unknown>;
type Schema = v.GenericSchema;

const refTo = (name: string) => `#/components/schemas/${name}`;
const base: ConversionConfig = {
  target: 'draft-2020-12',
  definitions: namedRecords,
  overrideRef: ({ referenceId }) => refTo(referenceId),
  // Checks written as code (v.check, v.custom) have no JSON Schema form: the document states the types and formats.
  errorMode: 'ignore',
  overrideSchema: ({ valibotSchema }) => (isJsonObjectSchema(valibotSchema) ? { type: 'object', additionalProperties: true } : undefined),
};
/** Requests are described as the client sends them (before transforms), responses as the client receives them. */
const requestConfig: ConversionConfig = { ...base, typeMode: 'input' };
const responseConfig: ConversionConfig = { ...base, typeMode: 'output' };

/** The named records live in components.schemas: a converted schema keeps only its reference to them. */
function withoutDefinitions(schema: JsonSchema): Json {
  const { $schema: _dialect, $defs: _named, ...rest } = schema as Json;
  return rest;
}

const jsonSchema = (schema: Schema, config: ConversionConfig) => withoutDefinitions(toJsonSchema(schema, config));

const isMedia = (declared: Schema | MediaResponse): declared is MediaResponse => 'mediaType' in declared;

const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No content',
  400: 'Bad request', 401: 'No valid credential', 403: 'The credential may not call this', 404: 'Not found',
  405: 'Method not allowed', 409: 'Conflict', 410: 'Gone', 413: 'Body too large', 415: 'Unsupported media type',
  422: 'Invalid input', 429: 'Rate limited or saturated: retry after Retry-After', 500: 'Internal error',
  502: 'The model gateway refused the call (e.g. model_not_found)',
  503: 'A backing service is unavailable: retry after Retry-After',
};

const header = (description: string) => ({ description, required: true, schema: { type: 'string' } });
const REQUEST_ID = { 'X-Request-Id': header('The request id (kept from the request when sane), in every log line of the request') };
const ERROR_HEADERS: Record<number, Json> = {
  401: { 'WWW-Authenticate': header('Bearer') },
  405: { Allow: header('The methods the path allows') },
  429: { 'Retry-After': header('Seconds to wait before retrying') },
  503: { 'Retry-After': header('Seconds to wait before retrying') },
};

/**
 * DESIGN §18: every answer to a rate-limited credential (draft-ietf-httpapi-ratelimit-headers); absent for
 * a credential without a limit, and before a credential is known.
 */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': { description: 'The credential\'s rate limit: `"rpm";q=<requests>;w=60`', required: false, schema: { type: 'string' } },
  RateLimit: {
    description: 'What is left of it: `"rpm";r=<requests remaining>;t=<seconds until all are back; with none left, until the next one is>`',
    required: false,
    schema: { type: 'string' },
  },
};

/** Statuses any request may meet: the pool or Redis saturated (429) or down (503), and the last resort (500). */
const EVERY_ROUTE = [429, 500, 503];
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The error statuses a route can answer: those it declares and those its declaration implies. */
export function errorStatuses(route: Route): number[] {
  const statuses = new Set([...(route.errors ?? []), ...EVERY_ROUTE]);
  if (route.auth !== 'public') {
    statuses.add(401);
    const { anyKey, writes, role } = route.auth;
    if (!anyKey || writes || role) statuses.add(403);
  }
  if (route.params) statuses.add(404);
  if (route.params || route.query || route.headers || route.body) statuses.add(422);
  // The JSON body parser runs for every method that may carry a body: malformed JSON is a 422, a huge body a 413.
  if (METHODS_WITH_BODY.has(route.method)) statuses.add(413).add(422);
  return [...statuses].sort((a, b) => a - b);
}

/** Koa's `/api/agents/:id` as OpenAPI's `/api/agents/{id}`. */
export const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

/**
 * A parameter whose text spells an integer or a boolean (its `spells` metadata, src/http/validation.ts)
 * is described as that type, with the default the handler receives when the parameter is absent.
 */
function spelledSchema(entry: Schema | undefined): Json | undefined {
  if (!entry) return undefined;
  const optional = entry.type === 'optional' ? (entry as v.OptionalSchema<Schema, unknown>) : undefined;
  const { spells } = v.getMetadata(optional?.wrapped ?? entry) as SpellsMetadata;
  if (!spells) return undefined;
  return optional?.default === undefined ? { ...spells } : { ...spells, default: v.parse(entry, undefined) };
}

/** A parameters schema is an object, alone or first in a pipe of checks (a pipe carries its first schema's entries). */
const entriesOf = (schema: Schema) => ('entries' in schema ? (schema.entries as Record<string, Schema>) : {});

function parameters(schema: Schema | undefined, location: 'path' | 'query' | 'header'): Json[] {
  if (!schema) return [];
  const object = jsonSchema(schema, requestConfig) as { properties?: Record<string, Json>; required?: string[] };
  const entries = entriesOf(schema);
  return Object.entries(object.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    const described = spelledSchema(entries[name]) ?? rest;
    const parameter: Json = { name, in: location, required: location === 'path' || (object.required ?? []).includes(name), schema: described };
    if (description) parameter.description = description;
    return parameter;
  });
}

function requestBody(route: Route): Json | undefined {
  if (!route.body && !route.upload) return undefined;
  const content: Json = route.body ? { 'application/json': { schema: jsonSchema(route.body, requestConfig) } } : {};
  if (route.upload) {
    content['multipart/form-data'] = {
      // `name` names a document (its JSON twin's field); a route without a JSON form takes the file alone.
      schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' }, ...(route.body ? { name: { type: 'string' } } : {}) } },
    };
  }
  return { required: true, content };
}

function successResponse(route: Route, status: number, declared: Schema | MediaResponse | null): Json {
  const headers = {
    ...REQUEST_ID,
    ...(route.auth === 'public' ? {} : RATE_LIMIT_HEADERS),
    ...Object.fromEntries(Object.entries(route.responseHeaders ?? {}).map(([name, text]) => [name, header(text)])),
  };
  if (declared === null) return { description: STATUS_TEXT[status] ?? 'Success', headers };
  if (isMedia(declared)) {
    const media = declared.schema ? { schema: jsonSchema(declared.schema, responseConfig) } : {};
    return { description: declared.description, headers, content: { [declared.mediaType]: media } };
  }
  return { description: STATUS_TEXT[status] ?? 'Success', headers, content: { 'application/json': { schema: jsonSchema(declared, responseConfig) } } };
}

function errorResponse(status: number): Json {
  const body = errorBodies[status];
  if (!body) throw new Error(`no error body is declared for status ${status}`);
  return {
    description: STATUS_TEXT[status] ?? `Error ${status}`,
    headers: { ...REQUEST_ID, ...(status === 401 ? {} : RATE_LIMIT_HEADERS), ...ERROR_HEADERS[status] },
    content: { 'application/json': { schema: jsonSchema(body, responseConfig) } },
  };
}

function accessText(route: Route): string {
  if (route.auth === 'public') return 'No credential.';
  const { scope, anyKey, writes, role, bodyToken } = route.auth;
  const parts = [anyKey ? 'Any valid API key or access token.' : scope ? `Scope \`${scope}\` (or full access).` : 'Full access (a JWT or an unscoped API key).'];
  if (role) parts.push(`Role \`${role}\`.`);
  if (writes) parts.push('Not for restricted users.');
  if (bodyToken) parts.push('The credential may also come as body field `token`.');
  return parts.join(' ');
}

const tagOf = (path: string) => {
  const [first, second] = path.split('/').filter(Boolean);
  if (first === 'mcp') return 'MCP';
  if (first !== 'api') return first === 'docs' || first === 'openapi.json' ? 'Documentation' : 'Health';
  return second === 'admin' ? 'Admin' : second === 'me' ? 'API keys' : (second ?? 'api').replace(/^\w/, (c) => c.toUpperCase()).replace(/-/g, ' ');
};

const operationId = (route: Route) =>
  `${route.method.toLowerCase()}${openApiPath(route.path).replace(/[{}]/g, '').split(/[/-]/).filter(Boolean).map((part) => part[0]!.toUpperCase() + part.slice(1)).join('')}`;

function operation(route: Route): Json {
  const responses: Json = {};
  for (const [status, declared] of Object.entries(route.responses)) responses[status] = successResponse(route, Number(status), declared);
  for (const status of errorStatuses(route)) responses[status] = { $ref: `#/components/responses/${status}` };
  const op: Json = {
    operationId: operationId(route),
    tags: [tagOf(route.path)],
    summary: route.summary,
    description: accessText(route),
    parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query'), ...parameters(route.headers, 'header')],
    responses,
  };
  const body = requestBody(route);
  if (body) op.requestBody = body;
  op.security = route.auth === 'public' ? [] : [{ accessToken: [] }, { apiKey: [] }];
  return op;
}

function components(routes: Route[]): Json {
  const statuses = [...new Set(routes.flatMap(errorStatuses))].sort((a, b) => a - b);
  const { definitions: _named, ...config } = responseConfig;
  const schemas = Object.fromEntries(Object.entries(toJsonSchemaDefs(namedRecords, config)).map(([name, schema]) => [name, withoutDefinitions(schema)]));
  return {
    schemas,
    responses: Object.fromEntries(statuses.map((status) => [String(status), errorResponse(status)])),
    securitySchemes: {
      accessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from POST /api/auth/login (2 h)' },
      apiKey: { type: 'http', scheme: 'bearer', description: 'A personal API key (`svc_…`), optionally limited to scopes' },
    },
  };
}

export function openApiDocument(allRoutes: Route[]): Json {
  const routes = allRoutes.filter((route) => !route.undocumented);
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Platform API',
      version: API_VERSION,
      description: 'Runs ReAct and DAG agents for API clients, streamed as server-sent events. Errors answer `{error, message}` (a 500 adds `request_id`), or FastAPI\'s `{detail: [{loc, msg, type}]}` for invalid input (422).',
    },
    paths,
    components: components(routes),
  };
}
