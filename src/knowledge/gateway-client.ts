import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, fetch as undiciFetch } from 'undici';
import { backoffMs, GatewayCallError, httpFailure, judge } from '../shared/gateway-policy.js';

/** How knowledge calls reach the gateway: its address and key, and the retry policy of DESIGN §6. */
export interface GatewayClientOptions {
  url: string;
  apiKey: string;
  /** Retries after the first attempt for transient failures (429, 5xx, unreachable, silent). */
  maxRetries: number;
  retryBaseMs: number;
  /** The longest single wait; a gateway asking for more is not retried. */
  retryMaxDelayMs: number;
  /** One attempt's limit. */
  timeoutMs: number;
  /** Texts per /v1/embeddings request. */
  batchSize?: number;
}

/** A knowledge call that failed for good: `code` is the gateway policy's verdict (`model_not_found`, `gateway_unavailable`…). */
export class EmbeddingError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** Keep-alive connections to the gateway, shared by every knowledge call of the process. */
const pool = new Agent({ keepAliveTimeout: 30_000 });

/**
 * POSTs JSON to the gateway under its error policy: transient failures are retried with
 * exponential backoff and jitter (Retry-After first); the rest, and retries spent, throw an
 * EmbeddingError naming the model. Returns the parsed body.
 */
export async function postWithRetries(options: GatewayClientOptions, path: string, model: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt(options, path, body, signal);
    } catch (err) {
      signal?.throwIfAborted();
      if (!(err instanceof GatewayCallError)) throw err;
      const verdict = judge(err, model);
      if (!verdict.transient || retry >= options.maxRetries) throw new EmbeddingError(verdict.code, verdict.message, verdict.transient);
      const delay = err.details.retryAfterMs ?? backoffMs(retry, options.retryBaseMs);
      if (delay > options.retryMaxDelayMs) throw new EmbeddingError(verdict.code, `${verdict.message} (asked to retry after ${Math.round(delay)} ms)`, true);
      await sleep(delay, undefined, signal ? { signal } : undefined);
    }
  }
}

async function attempt(options: GatewayClientOptions, path: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  let response;
  try {
    response = await undiciFetch(`${options.url.replace(/\/+$/, '')}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      dispatcher: pool,
    });
  } catch (err) {
    signal?.throwIfAborted();
    if (timeout.aborted) throw new GatewayCallError('timeout', `the gateway did not answer within ${options.timeoutMs} ms`);
    throw new GatewayCallError('network', `${(err as Error).message} ${String((err as Error).cause ?? '')}`.trim());
  }
  if (!response.ok) throw await httpFailure(response as unknown as Response);
  try {
    return await response.json();
  } catch (err) {
    if (timeout.aborted) throw new GatewayCallError('timeout', `the gateway did not finish its answer within ${options.timeoutMs} ms`);
    throw new GatewayCallError('malformed', `the answer was not JSON (${(err as Error).message})`);
  }
}

/** A response of the wrong shape: not worth retrying. */
export const malformed = (model: string, what: string) => new EmbeddingError('gateway_bad_response', `model "${model}": ${what}`, false);
