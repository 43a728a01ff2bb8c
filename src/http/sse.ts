import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import type { StoredEvent } from '../shared/events.js';

const HEARTBEAT_MS = 15_000;

/** A server-sent-events response (DESIGN §5 framing). Starts at once; `: ping` every 15 s. */
export class SseStream {
  private readonly body = new PassThrough();
  private readonly heartbeat: NodeJS.Timeout;
  private closed = false;
  private readonly closeHandlers: (() => void)[] = [];

  /** `open` holds every stream of this process, so shutdown can end them cleanly. */
  constructor(ctx: Context, headers: Record<string, string>, private readonly open: Set<SseStream>) {
    open.add(this);
    ctx.req.socket.setNoDelay(true);
    ctx.req.socket.setTimeout(0);
    ctx.status = 200;
    ctx.set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      'X-Accel-Buffering': 'no',
      Connection: 'keep-alive',
      ...headers,
    });
    ctx.body = this.body;
    // A comment at once, so the headers leave as soon as Koa starts the body, not at the first event (a waiting run may have none for minutes).
    this.write(': open\n\n');
    this.heartbeat = setInterval(() => this.write(': ping\n\n'), HEARTBEAT_MS);
    ctx.res.once('close', () => this.close());
  }

  /** Writes the events in one chunk. */
  send(events: StoredEvent[]): void {
    this.write(events.map((event) => `id: ${event.id}\nevent: ${event.type}\ndata: ${event.data}\n\n`).join(''));
  }

  /** One event in another protocol's framing (the OpenAI-compatible streams): `event:` only when named, no id. */
  sendFrame(data: string, event?: string): void {
    this.write(event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`);
  }

  onClose(handler: () => void): void {
    if (this.closed) handler();
    else this.closeHandlers.push(handler);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.open.delete(this);
    clearInterval(this.heartbeat);
    this.body.end();
    for (const handler of this.closeHandlers) handler();
  }

  private write(text: string) {
    if (!this.closed) this.body.write(text);
  }
}
