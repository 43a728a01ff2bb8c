import type { Knex } from 'knex';
import type { Sealer } from '../crypto/sealed.js';
import { resealRows } from '../crypto/rotate.js';

/** Header values of connectors, sealed per value with the connector and header name as context. */

export const MAX_HEADERS = 10;

const headerContext = (connectorId: string, name: string) => `connector:${connectorId}:header:${name.toLowerCase()}`;

export function sealHeaders(sealer: Sealer, connectorId: string, headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, sealer.seal(value, headerContext(connectorId, name))]));
}

export function openHeaders(sealer: Sealer, connectorId: string, sealed: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(sealed).map(([name, value]) => [name, sealer.open(value, headerContext(connectorId, name))]));
}

/**
 * Applies a header patch to the sealed map: a value replaces the header of that name (names compare case-insensitively),
 * null removes it; headers not named are kept as they are, still sealed.
 */
export function patchSealedHeaders(
  sealer: Sealer,
  connectorId: string,
  sealed: Record<string, string>,
  patch: Record<string, string | null>,
): Record<string, string> {
  const next = { ...sealed };
  for (const [name, value] of Object.entries(patch)) {
    for (const existing of Object.keys(next)) if (existing.toLowerCase() === name.toLowerCase()) delete next[existing];
    if (value !== null) next[name] = sealer.seal(value, headerContext(connectorId, name));
  }
  return next;
}

/** Values this short are too common to mask without garbling text (and too short to be real credentials). */
const MIN_MASKED_LENGTH = 6;

/** Replaces every occurrence of a connector's header value in a text bound for a client, a model or a log. */
export function maskSecrets(text: string, secrets: string[]): string {
  let masked = text;
  for (const secret of secrets) if (secret.length >= MIN_MASKED_LENGTH) masked = masked.split(secret).join('[redacted]');
  return masked;
}

/** Re-seals every connector header not yet sealed with the current key (`agentctl secrets:rotate`). */
export function rotateConnectorSecrets(knex: Knex, sealer: Sealer): Promise<{ checked: number; resealed: number }> {
  return resealRows<{ id: string; secret_headers: Record<string, string> }>(knex, 'connectors', ['secret_headers'], ({ id, secret_headers: sealed }) => {
    const stale = Object.entries(sealed).filter(([name, value]) => !sealer.isCurrent(value, headerContext(id, name)));
    if (stale.length === 0) return undefined;
    const next = { ...sealed };
    for (const [name, value] of stale) next[name] = sealer.reseal(value, headerContext(id, name));
    return { patch: { secret_headers: JSON.stringify(next) }, count: stale.length };
  });
}
