import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import type { ModelRequest, ModelResult, ModelSink } from '../types.js';
import { GatewayCallError, retryAfterMs } from '../../../src/shared/gateway-policy.js';
import type { ImageSlots } from './transcript.js';

/** What one model call needs of the gateway: its address and key, and the shared transport. */
export interface GatewayEndpoint {
  url: string;
  /** Absent: no Authorization (or x-goog-api-key) header at all, for gateways that take no key. */
  apiKey?: string;
  idleTimeoutMs: number;
}

const UNDICI_TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * The connection to the gateway, shared by every run of a worker: one keep-alive connection pool
 * and one SDK client. It bounds the gateway's silence, not its total time (spec: reasoning runs
 * can pass 2000 s): the pool's header and body timeouts restart at every byte received,
 * keep-alive comments included, and their end aborts the request.
 */
export class GatewayTransport {
  readonly fetch: typeof globalThis.fetch;
  readonly openai: OpenAI;
  private readonly pool: Agent;

  constructor(readonly endpoint: GatewayEndpoint) {
    const { idleTimeoutMs } = endpoint;
    this.pool = new Agent({ headersTimeout: idleTimeoutMs, bodyTimeout: idleTimeoutMs, keepAliveTimeout: 30_000 });
    this.fetch = ((input: string | URL | Request, init?: RequestInit & { imageSlots?: ImageSlots }) => {
      const { imageSlots, ...rest } = init ?? {};
      const body = imageSlots && typeof rest.body === 'string' ? imageSlots.body(rest.body) : rest.body;
      return undiciFetch(input as string, { ...(rest as object), body: body as string, dispatcher: this.pool });
    }) as unknown as typeof globalThis.fetch;
    // The SDK insists on a key; without one, a null Authorization header tells it to send none.
    const auth = endpoint.apiKey ? { apiKey: endpoint.apiKey } : { apiKey: 'none', defaultHeaders: { Authorization: null } };
    this.openai = new OpenAI({ baseURL: `${endpoint.url}/v1`, ...auth, fetch: this.fetch, maxRetries: 0, timeout: idleTimeoutMs, logLevel: 'off' });
  }

  /** Whether an error (or one of its causes) is the pool's idle timeout. */
  isIdleTimeout(err: unknown): boolean {
    for (let cause = err, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
      if (UNDICI_TIMEOUTS.has((cause as { code?: string }).code ?? '')) return true;
    }
    return false;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** One attempt of one model call, in one wire format. */
export interface FormatCall {
  model: string;
  request: ModelRequest;
  sink: ModelSink;
  transport: GatewayTransport;
  /** The images the request's user messages carry, and where their bytes go in its body. */
  images: ImageSlots;
}
export type FormatClient = (call: FormatCall) => Promise<ModelResult>;

const codeOf = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** Whatever an attempt threw, as the one error the retry policy reads. Unknown errors (bugs) pass through. */
export function toCallError(err: unknown, transport: GatewayTransport): unknown {
  if (err instanceof GatewayCallError) return err;
  if (transport.isIdleTimeout(err)) return new GatewayCallError('timeout', `the gateway sent nothing for ${transport.endpoint.idleTimeoutMs} ms`);
  if (err instanceof APIConnectionTimeoutError) return new GatewayCallError('timeout', err.message);
  if (err instanceof APIConnectionError) return new GatewayCallError('network', `${err.message} ${String(err.cause ?? '')}`.trim());
  if (err instanceof APIError) {
    const body = err.error as { message?: unknown } | undefined;
    const message = typeof body?.message === 'string' ? body.message : err.message;
    return new GatewayCallError('http', message, { status: err.status, code: codeOf(err.code), retryAfterMs: retryAfterMs(err.headers) });
  }
  if (err instanceof SyntaxError) return new GatewayCallError('malformed', `a chunk was not valid JSON (${err.message})`);
  if (err instanceof TypeError && /fetch failed|terminated|socket/i.test(`${err.message} ${String(err.cause ?? '')}`)) {
    return new GatewayCallError('network', `${err.message} ${String(err.cause ?? '')}`.trim());
  }
  return err;
}
