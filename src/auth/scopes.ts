import * as v from 'valibot';

export const SCOPES = ['chat', 'kb', 'agents', 'connectors', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const splitScopes = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/** A key's stored scope text → its scopes; null means full access. */
export function parseScopes(text: string | null): Scope[] | null {
  if (text === null) return null;
  return splitScopes(text).filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
}

/** Request field: space- or comma-separated scope names; unknown names → 422. Normalised to "a b". */
export const scopesField = v.pipe(
  v.string(),
  v.maxLength(200),
  v.check((text) => splitScopes(text).length > 0, 'scopes must name at least one scope, or be null for full access'),
  v.check(
    (text) => splitScopes(text).every((s) => (SCOPES as readonly string[]).includes(s)),
    `unknown scope; allowed: ${SCOPES.join(', ')}`,
  ),
  v.transform((text) => [...new Set(splitScopes(text))].join(' ')),
);

/** Whether a holder of `held` may grant `requested` (null = full access). */
export function canGrant(held: Scope[] | null, requested: Scope[] | null): boolean {
  if (held === null) return true;
  if (requested === null) return false;
  return requested.every((s) => held.includes(s));
}
