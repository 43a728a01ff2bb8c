import type { components } from '../../api/schema';

export type Connector = components['schemas']['Connector'];
export type ConnectorTestResult = components['schemas']['ConnectorTestResult'];

/** The API's transports (CONNECTOR_TRANSPORTS in src/db/connector-models.ts). */
export const TRANSPORTS = [
  { value: 'streamable_http', label: 'Streamable HTTP' },
  { value: 'sse', label: 'Server-sent events (legacy)' },
];
