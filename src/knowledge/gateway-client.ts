import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, fetch as undiciFetch } from 'undici';
import { GatewayCallError, httpFailure, retryDecision } from '../shared/gateway-policy.js';

/** How knowledge calls reach the gateway: its address and key, and the retry policy of DESIGN §6. */
export interface GatewayClientOptions {
  url: string;
  /** Absent: no Authorization header (gateways that take no key). */
  apiKey?: string;
  /** Retries after the first attempt for transient failures (429, 5xx, unreachable, silent). */
  maxRetries: number;
  retryBaseMs: number;
  /** The longest single wait; a gateway asking for more is not retried. */
  retryMaxDelayMs: number;
  /** One attempt's limit. */
  timeoutMs: number;
  /** Texts per /v1/embeddings request (default 64). */
  batchSize?: number;
  /** Instead of undici's fetch over the shared keep-alive pool (tests, instrumentation). */
  fetch?: typeof fetch;
}

/** A knowledge call to the gateway that failed for good: `code` is the gateway policy's verdict (`model_not_found`, `gateway_unavailable`…). */
export class GatewayClientError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** Transient (the gateway was busy, down or silent): the same call may succeed later. */
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** An embedding call failed (GatewayEmbedder). */
export class EmbeddingError extends GatewayClientError {}

/** A rerank call failed (GatewayReranker); callers fall back to their own order. */
export class RerankError extends GatewayClientError {}

export type ClientErrorClass = new (code: string, message: string, retryable: boolean) => GatewayClientError;

/** One JSON call: where, for which model, and the error class its failures take. */
export interface GatewayCall {
  path: string;
  model: string;
  body: unknown;
  failure: ClientErrorClass;
  signal?: AbortSignal;
}

/** Keep-alive connections to the gateway, shared by every knowledge call of the process. */
const pool = new Agent({ keepAliveTimeout: 30_000 });

/**
 * POSTs JSON to the gateway under its error policy: transient failures are retried with
 * exponential backoff and jitter (Retry-After first); the rest, and retries spent, throw the
 * call's error class naming the model. Returns the parsed body.
 */
export async function postWithRetries(options: GatewayClientOptions, call: GatewayCall): Promise<unknown> {
  const { model, signal, failure: Failure } = call;
  for (let retry = 0; ; retry++) {
    try {
      return await attempt(options, call);
    } catch (err) {
      signal?.throwIfAborted();
      if (!(err instanceof GatewayCallError)) throw err;
      const { verdict, delayMs } = retryDecision(err, model, retry, options);
      if (delayMs === undefined) throw new Failure(verdict.code, verdict.message, verdict.transient);
      await sleep(delayMs, undefined, signal ? { signal } : undefined);
    }
  }
}

function send(options: GatewayClientOptions, call: GatewayCall, signal: AbortSignal): Promise<Response> {
  const url = `${options.url.replace(/\/+$/, '')}${call.path}`;
  const init = {
    method: 'POST',
    headers: { ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}), 'content-type': 'application/json' },
    body: JSON.stringify(call.body),
    signal,
  };
  if (options.fetch) return options.fetch(url, init);
  return undiciFetch(url, { ...init, dispatcher: pool }) as unknown as Promise<Response>;
}

/** One attempt, bounded by `timeoutMs` from request to the end of the body; failures as GatewayCallError. */
async function attempt(options: GatewayClientOptions, call: GatewayCall): Promise<unknown> {
  const { signal } = call;
  const timeout = AbortSignal.timeout(options.timeoutMs);
  let response: Response;
  try {
    response = await send(options, call, signal ? AbortSignal.any([signal, timeout]) : timeout);
  } catch (err) {
    signal?.throwIfAborted();
    if (timeout.aborted) throw new GatewayCallError('timeout', `the gateway did not answer within ${options.timeoutMs} ms`);
    throw new GatewayCallError('network', `${(err as Error).message} ${String((err as Error).cause ?? '')}`.trim());
  }
  if (!response.ok) throw await httpFailure(response);
  try {
    return await response.json();
  } catch (err) {
    signal?.throwIfAborted();
    if (timeout.aborted) throw new GatewayCallError('timeout', `the gateway did not finish its answer within ${options.timeoutMs} ms`);
    throw new GatewayCallError('malformed', `the answer was not JSON (${(err as Error).message})`);
  }
}

/** An answer of the wrong shape: not retried (the same model would answer the same way). */
export const malformed = (Failure: ClientErrorClass, model: string, what: string) => new Failure('gateway_bad_response', `a malformed answer from model "${model}": ${what}`, false);
