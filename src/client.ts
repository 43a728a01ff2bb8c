import { readEvents } from './shared/event-stream.js';
import type { RunEvent } from './shared/events.js';
import type { RunMode } from './shared/run-statuses.js';

/** A small client of the platform's HTTP API, used by agentctl's run and inject commands. */
export class PlatformClient {
  constructor(
    private readonly baseUrl: string,
    private readonly credential: string,
  ) {}

  private headers() {
    return { 'content-type': 'application/json', authorization: `Bearer ${this.credential}` };
  }

  private async failure(res: Response): Promise<Error> {
    const text = await res.text();
    try {
      const body = JSON.parse(text) as { error?: string; message?: string; detail?: { loc: unknown[]; msg: string }[] };
      if (body.detail) return new Error(body.detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
      return new Error(`${res.status} ${body.error}: ${body.message}`);
    } catch {
      return new Error(`${res.status} ${text.slice(0, 200)}`);
    }
  }

  /** A request to the platform; a network failure names the address tried and what to check (fetch says only "fetch failed"). */
  private async send(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(`${this.baseUrl}${path}`, init);
    } catch (err) {
      throw new Error(`could not reach the platform at ${this.baseUrl} (${networkCause(err)}): is it running, on that port? Set AGENT_PLATFORM_URL or --url to its address`, { cause: err });
    }
  }

  /** Starts a run and calls `onEvent` for each event as it arrives; resolves after `done`. */
  async run(mode: RunMode, body: Record<string, unknown>, onEvent: (event: RunEvent) => void): Promise<void> {
    const res = await this.send(`/api/${mode}`, { method: 'POST', headers: this.headers(), body: JSON.stringify(body) });
    if (!res.ok || !res.body) throw await this.failure(res);
    await readEvents(res, ({ event }) => onEvent(event));
  }

  async inject(conversationId: string, content: string): Promise<void> {
    const res = await this.send('/api/chat/inject', {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({ conversation_id: conversationId, content }),
    });
    if (!res.ok) throw await this.failure(res);
  }
}

/** The most specific reason a fetch failed: a system error code (ECONNREFUSED, ENOTFOUND…) when there is one. */
function networkCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } }).cause;
  return cause?.code ?? cause?.errors?.find((e) => e.code)?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

/** Renders events compactly for a terminal: tokens as they arrive, tools and plans on one line each. */
export function renderEvent(event: RunEvent, write: (text: string) => void): void {
  const line = (text: string) => write(`\n  ${text}\n`);
  switch (event.type) {
    case 'token':
      return write(event.data.text);
    case 'tool_call':
      return line(`→ ${event.data.name}(${JSON.stringify(event.data.arguments)})`);
    case 'tool_result':
      return line(`${event.data.is_error ? '✗' : '←'} ${JSON.stringify(event.data.output)}`);
    case 'plan':
      return line(`plan: ${event.data.nodes.map((n) => `${n.id}${n.depends_on.length ? `[${n.depends_on.join(',')}]` : ''} ${n.task}`).join(' | ')}`);
    case 'node':
      return event.data.status === 'started' ? undefined : line(`${event.data.status === 'succeeded' ? '✓' : '✗'} ${event.data.node_id}`);
    case 'injected':
      return line(`↳ injected: ${event.data.content}`);
    case 'error':
      return line(`error ${event.data.code}: ${event.data.message}`);
    case 'done':
      return write(`\n[${event.data.status} in ${event.data.duration_ms} ms, ${event.data.usage.total_tokens} tokens]\n`);
    default:
      return undefined;
  }
}
