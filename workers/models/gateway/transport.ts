import { Agent, fetch as undiciFetch } from 'undici';
import type { ModelRequest, ModelResult, ModelSink } from '../types.js';
import type { Usage } from '../../../src/shared/events.js';
import { GatewayCallError } from '../../../src/shared/gateway-policy.js';
import type { ImageSlots } from './transcript.js';
import { openAiEvents } from './openai-events.js';

/** What one model call needs of the gateway: its address and key, and the shared transport. */
export interface GatewayEndpoint {
  url: string;
  /** Absent: no Authorization (or x-goog-api-key) header at all, for gateways that take no key. */
  apiKey?: string;
  idleTimeoutMs: number;
}

const UNDICI_TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** undici's errors for a connection that failed or closed (the dispatcher API's, which fetch wraps in `TypeError: fetch failed`). */
const UNDICI_NETWORK = new Set(['UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_CLOSED', 'UND_ERR_DESTROYED', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH']);

/**
 * The connection to the gateway, shared by every run of a worker: one keep-alive connection pool
 * (fetch for the native format, the dispatcher API for the OpenAI-style ones). It bounds the gateway's silence, not its total time (spec: reasoning runs
 * can pass 2000 s): the pool's header and body timeouts restart at every byte received,
 * keep-alive comments included, and their end aborts the request.
 */
export class GatewayTransport {
  readonly fetch: typeof globalThis.fetch;
  private readonly pool: Agent;
  /** Where the OpenAI-style paths start, and the headers every such call sends (built once, not per call). */
  private readonly openAiBase: URL;
  private readonly openAiHeaders: Record<string, string>;

  constructor(readonly endpoint: GatewayEndpoint) {
    const { idleTimeoutMs } = endpoint;
    this.pool = new Agent({ headersTimeout: idleTimeoutMs, bodyTimeout: idleTimeoutMs, keepAliveTimeout: 30_000 });
    this.fetch = ((input: string, init?: RequestInit) => undiciFetch(input, { ...(init as object), dispatcher: this.pool })) as unknown as typeof globalThis.fetch;
    this.openAiBase = new URL(`${endpoint.url}/v1`);
    this.openAiHeaders = { accept: 'application/json', 'content-type': 'application/json', ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}) };
  }

  /** POSTs a streamed OpenAI-style call (`path` under /v1) and yields its events' data (see `openAiEvents`). */
  async *openAiStream(path: string, body: unknown, images: ImageSlots, signal: AbortSignal): AsyncGenerator<unknown> {
    const response = await this.pool.request({
      origin: this.openAiBase.origin,
      path: `${this.openAiBase.pathname}${path}`,
      method: 'POST',
      headers: this.openAiHeaders,
      body: images.body(JSON.stringify(body)),
      signal,
    });
    yield* openAiEvents(response);
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
/** What one attempt read; `usage` undefined when the server reported none (not the same as a reported 0). */
export type FormatResult = Omit<ModelResult, 'usage'> & { usage: Usage | undefined };
export type FormatClient = (call: FormatCall) => Promise<FormatResult>;

/** A connection refused, reset or closed under the call: a system error (it names its syscall) or undici's own. */
function isNetworkFailure(err: unknown): err is Error {
  if (!(err instanceof Error)) return false;
  const { code, syscall } = err as { code?: unknown; syscall?: unknown };
  return typeof syscall === 'string' || (typeof code === 'string' && UNDICI_NETWORK.has(code));
}

/** Whatever an attempt threw, as the one error the retry policy reads. Unknown errors (bugs) pass through. */
export function toCallError(err: unknown, transport: GatewayTransport): unknown {
  if (err instanceof GatewayCallError) return err;
  if (transport.isIdleTimeout(err)) return new GatewayCallError('timeout', `the gateway sent nothing for ${transport.endpoint.idleTimeoutMs} ms`);
  if (err instanceof SyntaxError) return new GatewayCallError('malformed', `a chunk was not valid JSON (${err.message})`);
  if (isNetworkFailure(err)) return new GatewayCallError('network', `${err.message} ${String(err.cause ?? '')}`.trim());
  if (err instanceof TypeError && /fetch failed|terminated|socket/i.test(`${err.message} ${String(err.cause ?? '')}`)) {
    return new GatewayCallError('network', `${err.message} ${String(err.cause ?? '')}`.trim());
  }
  return err;
}
