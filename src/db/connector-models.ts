import { Model } from 'objection';

/** How the platform reaches an MCP server (src/connectors/mcp.ts). */
export const CONNECTOR_TRANSPORTS = ['streamable_http', 'sse'] as const;
export type ConnectorTransport = (typeof CONNECTOR_TRANSPORTS)[number];

export type ConnectorStatus = 'unknown' | 'ok' | 'error';

export interface StoredTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** A remote MCP tool server (DESIGN §8). `secret_headers` maps each header name to its sealed value. */
export class Connector extends Model {
  static override tableName = 'connectors';
  id!: string;
  user_id!: string;
  name!: string;
  tool_prefix!: string;
  kind!: 'mcp';
  url!: string;
  transport!: ConnectorTransport;
  description!: string;
  is_active!: boolean;
  secret_headers!: Record<string, string>;
  status!: ConnectorStatus;
  last_error!: string | null;
  last_checked_at!: Date | null;
  tools!: StoredTool[];
  created_at!: Date;
  updated_at!: Date;

  static override get jsonAttributes() {
    return ['secret_headers', 'tools'];
  }
}
