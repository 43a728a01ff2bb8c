/**
 * The gateway's error conventions (spec: Model gateway errors) as decisions: what is retried,
 * how long to wait, and which `error` event a run ends with when it is not.
 */

export type CallFailureKind = 'http' | 'network' | 'timeout' | 'malformed';

/** One failed gateway call, whatever the wire format; each format's client throws only this. */
export class GatewayCallError extends Error {
  constructor(
    readonly kind: CallFailureKind,
    message: string,
    readonly details: { status?: number; code?: string; retryAfterMs?: number } = {},
  ) {
    super(message);
  }
}

export interface Verdict {
  /** The `error` event's code if the run ends on this failure. */
  code: string;
  /** Worth another attempt of the same call (transient), unless output was already streamed. */
  transient: boolean;
  message: string;
}

const NOT_RETRIED: Record<number, string> = {
  400: 'gateway_bad_request',
  401: 'gateway_unauthorized',
  404: 'gateway_not_found',
  413: 'gateway_request_too_large',
};

const RETRIED: Record<number, string> = {
  429: 'gateway_rate_limited',
  503: 'gateway_unavailable',
};

const BY_KIND: Record<Exclude<CallFailureKind, 'http'>, string> = {
  network: 'gateway_unreachable',
  timeout: 'gateway_timeout',
  malformed: 'gateway_bad_response',
};

/** Gateway messages are echoed into events and logs; keep them readable and bounded. */
const excerpt = (text: string) => (text.length > 500 ? `${text.slice(0, 500)}…` : text);

export function judge(failure: GatewayCallError, model: string): Verdict {
  const { status, code } = failure.details;
  const detail = excerpt(failure.message);
  if (code === 'model_not_found') {
    // The model name is at fault: no retry, no fallback (another attempt cannot fix the name).
    const message = detail.includes(model) ? detail : `model "${model}" not found: ${detail}`;
    return { code: 'model_not_found', transient: false, message };
  }
  if (failure.kind !== 'http') return { code: BY_KIND[failure.kind], transient: true, message: `model "${model}": ${detail}` };
  const prefix = `the gateway answered ${status ?? 'an error'} for model "${model}"`;
  if (status !== undefined && NOT_RETRIED[status]) return { code: NOT_RETRIED[status]!, transient: false, message: `${prefix}: ${detail}` };
  if (status !== undefined && RETRIED[status]) return { code: RETRIED[status]!, transient: true, message: `${prefix}: ${detail}` };
  // Other 5xx (502, 504), and error objects sent mid-stream, are transient; other 4xx are not.
  const transient = status === undefined || status >= 500;
  return { code: 'gateway_error', transient, message: `${prefix}: ${detail}` };
}

/** `Retry-After` (seconds or an HTTP date) or the `retry-after-ms` some gateways send; undefined if absent or unreadable. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Exponential backoff with "equal jitter": half the doubled delay, plus a random part of the other half. */
export function backoffMs(retry: number, baseMs: number, random: () => number = Math.random): number {
  const ceiling = baseMs * 2 ** retry;
  return ceiling / 2 + random() * (ceiling / 2);
}

export interface RetryPolicy {
  maxRetries: number;
  retryBaseMs: number;
  /** The longest single wait; a gateway asking for more is not retried. */
  retryMaxDelayMs: number;
}

/**
 * After attempt `retry` (0 = the first) failed: how long to wait before the next one (Retry-After
 * first, else backoff), or `giveUp` with the verdict the call ends on. Every gateway client
 * (chat and the knowledge models) decides here.
 */
export function retryDecision(failure: GatewayCallError, model: string, retry: number, policy: RetryPolicy, random: () => number = Math.random): { verdict: Verdict; delayMs?: number } {
  const verdict = judge(failure, model);
  if (!verdict.transient || retry >= policy.maxRetries) return { verdict };
  const delayMs = failure.details.retryAfterMs ?? backoffMs(retry, policy.retryBaseMs, random);
  if (delayMs > policy.retryMaxDelayMs) return { verdict: { ...verdict, message: `${verdict.message} (asked to retry after ${Math.round(delayMs)} ms, beyond GATEWAY_RETRY_MAX_DELAY_MS)` } };
  return { verdict, delayMs };
}

const codeOf = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** An error response of any format: `{error: {code, message}}` when the body says so. */
export async function httpFailure(response: Response): Promise<GatewayCallError> {
  const text = await response.text().catch(() => '');
  let error: { code?: unknown; message?: unknown } | undefined;
  try {
    error = (JSON.parse(text) as { error?: typeof error }).error;
  } catch {
    // not JSON: the text itself is the message
  }
  const message = typeof error?.message === 'string' ? error.message : text || response.statusText;
  return new GatewayCallError('http', message, { status: response.status, code: codeOf(error?.code), retryAfterMs: retryAfterMs(response.headers) });
}
