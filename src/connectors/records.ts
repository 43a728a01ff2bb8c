import * as v from 'valibot';
import { described, instant, uuid } from '../shared/record-schemas.js';
import type { Connector } from '../db/connector-models.js';

const toolSummary = v.strictObject({ name: v.string(), description: v.string() });
export const ConnectorRecordSchema = v.strictObject({
  id: uuid,
  name: v.string(),
  kind: v.literal('mcp'),
  url: v.string(),
  transport: v.string(),
  description: v.string(),
  is_active: v.boolean(),
  secret_headers: described(v.array(v.string()), 'The names of the configured headers; their values are never returned'),
  status: v.picklist(['unknown', 'ok', 'error']),
  last_error: v.nullable(v.string()),
  last_checked_at: v.nullable(instant),
  tools: v.array(toolSummary),
  created_at: instant,
  updated_at: instant,
});
export type ConnectorRecord = v.InferOutput<typeof ConnectorRecordSchema>;

export const ConnectorTestResultSchema = v.strictObject({
  status: v.picklist(['ok', 'error']),
  tools: v.array(v.strictObject({ name: v.string(), description: v.string(), input_schema: v.record(v.string(), v.unknown()) })),
  error: v.optional(v.string()),
  latency_ms: v.number(),
});
export type ConnectorTestResult = v.InferOutput<typeof ConnectorTestResultSchema>;

/** The record clients see: header names only, never their values. */
export function presentConnector(connector: Connector): ConnectorRecord {
  return {
    id: connector.id,
    name: connector.name,
    kind: connector.kind,
    url: connector.url,
    transport: connector.transport,
    description: connector.description,
    is_active: connector.is_active,
    secret_headers: Object.keys(connector.secret_headers).sort(),
    status: connector.status,
    last_error: connector.last_error,
    last_checked_at: connector.last_checked_at?.toISOString() ?? null,
    tools: connector.tools.map(({ name, description }) => ({ name, description })),
    created_at: connector.created_at.toISOString(),
    updated_at: connector.updated_at.toISOString(),
  };
}
