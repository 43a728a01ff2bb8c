import type { Principal } from '../auth/authenticator.js';
import { sha256Hex } from '../auth/secrets.js';
import type { CallerRef } from './in-flight-calls.js';

/**
 * The caller of an MCP request: its user, and which credential it came with (an API key by its id, an
 * access token by a hash of it), so two clients of one user with different credentials never share
 * a request id (src/mcp/in-flight-calls.ts). The credential itself is never kept.
 */
export function callerOf(principal: Principal, credential: string | undefined): CallerRef {
  const fingerprint = principal.keyId ? `key:${principal.keyId}` : `token:${sha256Hex(credential ?? '').slice(0, 32)}`;
  return { userId: principal.user.id, credential: fingerprint };
}
