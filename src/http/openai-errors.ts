import type { ValidationIssue } from '../shared/errors.js';

/**
 * DESIGN §16: on /v1/* (the OpenAI-compatible endpoints) an error takes OpenAI's shape,
 * `{error: {message, type, code, param}}`, with the statuses of §4, so OpenAI SDKs raise their own
 * typed errors. `code` is the platform's error code (FastAPI's issue type for a 422).
 */
export const speaksOpenAi = (path: string) => path === '/v1' || path.startsWith('/v1/');

const TYPES: Record<number, string> = {
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
};

export function openAiErrorBody(status: number, body: Record<string, unknown>): { error: Record<string, unknown> } {
  // A spent token budget is its own type at OpenAI, which clients (LiteLLM, LibreChat) tell from a rate limit.
  const type = body.error === 'insufficient_quota' ? 'insufficient_quota' : status >= 500 ? 'server_error' : (TYPES[status] ?? 'invalid_request_error');
  const detail = body.detail as ValidationIssue[] | undefined;
  if (Array.isArray(detail)) {
    const first = detail[0];
    const param = first?.loc.filter((part) => part !== 'body').join('.') || null;
    const message = detail.map((issue) => `${issue.loc.join('.')}: ${issue.msg}`).join('; ');
    return { error: { message, type, code: first?.type ?? 'invalid_value', param } };
  }
  const { error: code = null, message = '', param = null, request_id: requestId } = body;
  return { error: { message, type, code, param, ...(requestId ? { request_id: requestId } : {}) } };
}
