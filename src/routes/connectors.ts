import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type AppContext, type Route } from '../auth/route.js';
import { ConnectorRecordSchema, ConnectorTestResultSchema, presentConnector } from '../connectors/records.js';
import { pageOf } from '../shared/record-schemas.js';
import { ValidationError, type ValidationIssue } from '../shared/errors.js';
import { paginationQuery, uuidText, validateBody } from '../http/validation.js';
import { outboundUrl, type OutboundPolicy } from '../net/outbound.js';
import { CONNECTOR_TRANSPORTS } from '../connectors/mcp.js';
import { MAX_HEADERS } from '../connectors/secrets.js';
import { actorOf } from '../auth/actor.js';

/** Headers the MCP transports set themselves, and hop-by-hop headers: a connector may not override them. */
const RESERVED_HEADERS = new Set([
  'accept', 'connection', 'content-length', 'content-type', 'expect', 'host', 'keep-alive', 'last-event-id',
  'mcp-protocol-version', 'mcp-session-id', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade',
]);

const headerName = v.pipe(
  v.string(),
  v.regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'must be an HTTP header name'),
  v.check((name) => !RESERVED_HEADERS.has(name.toLowerCase()), 'is set by the MCP transport and cannot be configured'),
);
const headerValue = v.pipe(v.string(), v.minLength(1), v.maxLength(8192), v.regex(/^[\t\x20-\x7e\x80-\xff]+$/, 'must be visible ASCII or Latin-1 (no line breaks)'));

const MAX_HEADERS_MESSAGE = `a connector has at most ${MAX_HEADERS} headers`;
const DISTINCT_MESSAGE = 'header names must differ in more than case';
const fewEnough = (headers: Record<string, unknown>) => Object.keys(headers).length <= MAX_HEADERS;
const distinctNames = (headers: Record<string, unknown>) => new Set(Object.keys(headers).map((n) => n.toLowerCase())).size === Object.keys(headers).length;
/** valibot's record also takes an array (as an object keyed "0", "1", …); headers must be a real object. */
const plainObject = v.custom<Record<string, unknown>>((x) => typeof x === 'object' && x !== null && !Array.isArray(x), 'headers must be an object of header names to values');
const createHeaders = v.pipe(v.intersect([plainObject, v.record(headerName, headerValue)]), v.check((h) => fewEnough(h), MAX_HEADERS_MESSAGE), v.check((h) => distinctNames(h), DISTINCT_MESSAGE));
const patchHeaders = v.pipe(v.intersect([plainObject, v.record(headerName, v.nullable(headerValue))]), v.check((h) => fewEnough(h), MAX_HEADERS_MESSAGE), v.check((h) => distinctNames(h), DISTINCT_MESSAGE));

const name = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(64));
const description = v.pipe(v.string(), v.maxLength(2000));

const bodies = (policy: OutboundPolicy) => ({
  create: v.strictObject({
    name,
    kind: v.picklist(['mcp']),
    url: outboundUrl(policy),
    transport: v.optional(v.picklist(CONNECTOR_TRANSPORTS), 'streamable_http'),
    description: v.optional(description, ''),
    headers: v.optional(createHeaders, {}),
    is_active: v.optional(v.boolean(), true),
  }),
  /** `headers` names the headers to change: a value replaces one, null removes it; the others stay. */
  update: v.strictObject({
    name: v.optional(name),
    kind: v.optional(v.picklist(['mcp'])),
    url: v.optional(outboundUrl(policy)),
    transport: v.optional(v.picklist(CONNECTOR_TRANSPORTS)),
    description: v.optional(description),
    headers: v.optional(patchHeaders),
    is_active: v.optional(v.boolean()),
  }),
});

const ConnectorPath = v.object({ id: uuidText });

/** A 422 never echoes header values: they are secrets even when refused. */
function maskHeaderValues(issue: ValidationIssue): ValidationIssue {
  if (issue.loc[1] === 'headers') {
    const { input: _secret, ...rest } = issue;
    return rest;
  }
  const input = issue.input as { headers?: unknown } | undefined;
  if (input && typeof input === 'object' && input.headers && typeof input.headers === 'object') {
    return { ...issue, input: { ...input, headers: Object.fromEntries(Object.keys(input.headers).map((k) => [k, '[redacted]'])) } };
  }
  return issue;
}

function validateConnectorBody<S extends v.GenericSchema>(ctx: AppContext, schema: S): v.InferOutput<S> {
  try {
    return validateBody(ctx, schema);
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError(err.detail.map(maskHeaderValues));
    throw err;
  }
}

/** Connectors (DESIGN §8): scope `connectors`; restricted users may read, not write; another user's → 404. */
export function connectorRoutes({ connectors, config }: Services): Route[] {
  const { create, update } = bodies(config.outbound);
  return [
    route({
      method: 'GET',
      path: '/api/connectors',
      summary: "List the caller's connectors",
      auth: { scope: 'connectors' },
      responses: { 200: pageOf(ConnectorRecordSchema) },
      query: paginationQuery,
      handle: ({ principal, query }) => connectors.list(principal.user.id, query),
    }),
    route({
      method: 'POST',
      path: '/api/connectors',
      summary: 'Create a connector (an MCP tool server); header values are sealed and never returned',
      auth: { scope: 'connectors', writes: true },
      responses: { 201: ConnectorRecordSchema },
      body: create,
      readsBody: true,
      status: 201,
      handle: async ({ principal, ctx }) => presentConnector(await connectors.create(principal.user.id, validateConnectorBody(ctx, create), actorOf(principal, ctx))),
    }),
    route({
      method: 'GET',
      path: '/api/connectors/:id',
      summary: 'Read a connector',
      auth: { scope: 'connectors' },
      responses: { 200: ConnectorRecordSchema },
      params: ConnectorPath,
      handle: async ({ principal, params }) => presentConnector(await connectors.own(principal.user.id, params.id)),
    }),
    route({
      method: 'PATCH',
      path: '/api/connectors/:id',
      summary: 'Change a connector; `headers` replaces (value) or removes (null) single headers',
      auth: { scope: 'connectors', writes: true },
      responses: { 200: ConnectorRecordSchema },
      params: ConnectorPath,
      body: update,
      readsBody: true,
      handle: async ({ principal, params, ctx }) => {
        const body = validateConnectorBody(ctx, update);
        return presentConnector(await connectors.update(await connectors.own(principal.user.id, params.id), body, actorOf(principal, ctx)));
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/connectors/:id',
      summary: 'Delete a connector (agents lose it)',
      auth: { scope: 'connectors', writes: true },
      responses: { 204: null },
      params: ConnectorPath,
      status: 204,
      handle: ({ principal, params, ctx }) => connectors.remove(principal.user.id, params.id, actorOf(principal, ctx)),
    }),
    route({
      method: 'POST',
      path: '/api/connectors/:id/test',
      summary: 'Connect to the server and list its tools; an unreachable server is status "error", never a 5xx',
      // A test changes the connector's recorded status and calls out, so it counts as a write.
      auth: { scope: 'connectors', writes: true },
      responses: { 200: ConnectorTestResultSchema },
      params: ConnectorPath,
      handle: ({ principal, params }) => connectors.test(principal.user.id, params.id),
    }),
  ];
}
