import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import type { ModelRequest, ModelResult, ModelSink } from '../types.js';
import { GatewayCallError, retryAfterMs } from './policy.js';

/**
 * Bounds the gateway's silence, not its total time (spec: reasoning runs can pass 2000 s): the
 * clock restarts at every byte received, keep-alive comments included, and its end aborts the
 * request. One watch per attempt.
 */
export class IdleWatch {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  fired = false;

  constructor(private readonly ms: number) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  touch(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.fired = true;
      this.controller.abort(new GatewayCallError('timeout', `the gateway sent nothing for ${this.ms} ms`));
    }, this.ms);
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  /** A fetch under this watch; what the OpenAI SDK and the native client both send through. */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    this.touch();
    const signal = init?.signal ? AbortSignal.any([init.signal, this.signal]) : this.signal;
    const response = await fetch(input, { ...init, signal });
    this.touch();
    if (!response.body) {
      this.stop();
      return response;
    }
    const watched = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform: (chunk, controller) => {
          this.touch();
          controller.enqueue(chunk);
        },
        flush: () => this.stop(),
      }),
    );
    return new Response(watched, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** One attempt of one model call, in one wire format. */
export interface FormatCall {
  model: string;
  request: ModelRequest;
  sink: ModelSink;
  watch: IdleWatch;
  gateway: { url: string; apiKey: string; idleTimeoutMs: number };
}
export type FormatClient = (call: FormatCall) => Promise<ModelResult>;

/** The official SDK for the chat and responses formats: its own retries off (the policy here decides), its requests under the watch. */
export function sdkClient({ gateway, watch }: FormatCall): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: gateway.apiKey, fetch: watch.fetch, maxRetries: 0, timeout: gateway.idleTimeoutMs, logLevel: 'off' });
}

const codeOf = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** Whatever an attempt threw, as the one error the retry policy reads. Unknown errors (bugs) pass through. */
export function toCallError(err: unknown, watch: IdleWatch): unknown {
  if (watch.fired) return watch.signal.reason;
  if (err instanceof GatewayCallError) return err;
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
