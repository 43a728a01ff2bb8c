import type { Models } from '../../src/db/models.js';
import type { Sealer } from '../../src/crypto/sealed.js';
import { openHeaders } from '../../src/connectors/secrets.js';
import type { ConnectorEndpoint } from './sessions.js';

/**
 * An agent's connectors as a run uses them: the user's own, active ones among `ids`, in that order, headers unsealed.
 * One whose headers do not open (an ENCRYPTION_KEY problem) is left out and reported, so the run goes on without it.
 */
export async function loadConnectorEndpoints(models: Models, sealer: Sealer, userId: string, ids: string[]) {
  const endpoints: ConnectorEndpoint[] = [];
  const problems: { connectorId: string; name: string; error: string }[] = [];
  if (ids.length === 0) return { endpoints, problems };
  const rows = await models.Connector.query().where({ user_id: userId, is_active: true }).whereIn('id', ids);
  const byId = new Map(rows.map((row) => [row.id, row]));
  for (const row of ids.flatMap((id) => byId.get(id) ?? [])) {
    try {
      endpoints.push({
        id: row.id,
        name: row.name,
        prefix: row.tool_prefix,
        url: row.url,
        transport: row.transport,
        headers: openHeaders(sealer, row.id, row.secret_headers),
        updatedAt: row.updated_at,
        storedTools: row.tools,
      });
    } catch (err) {
      problems.push({ connectorId: row.id, name: row.name, error: (err as Error).message });
    }
  }
  return { endpoints, problems };
}
