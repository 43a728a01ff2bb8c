import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { StoredEvent } from '../shared/events.js';

const HEARTBEAT_MS = 15_000;
/** The heartbeat's resolution: a stream's pings fall 15 s apart, its first 14–15 s after it opened. */
const HEARTBEAT_SLOTS = 15;

/** The stream a response carries (its 'close' listener and Koa's `respond` find it there: no closure per stream). */
const STREAM = Symbol('sse stream');
type StreamResponse = ServerResponse & { [STREAM]?: SseStream };

/**
 * One timer for every open stream of the process (not one interval each): a wheel of 15 slots,
 * one turned per second; a stream joins the slot of the second it opened in and is pinged each
 * time the wheel comes back to it, every 15 s. The timer runs only while a stream is open.
 */
class Heartbeat {
  private readonly slots = Array.from({ length: HEARTBEAT_SLOTS }, () => new Set<SseStream>());
  private slot = 0;
  private size = 0;
  private timer: NodeJS.Timeout | undefined;

  add(stream: SseStream): number {
    this.slots[this.slot]!.add(stream);
    if (this.size++ === 0) {
      this.timer = setInterval(() => this.turn(), HEARTBEAT_MS / HEARTBEAT_SLOTS);
      // The streams' sockets keep the process alive, not their heartbeat.
      this.timer.unref();
    }
    return this.slot;
  }

  remove(stream: SseStream, slot: number): void {
    if (!this.slots[slot]!.delete(stream)) return;
    if (--this.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private turn(): void {
    this.slot = (this.slot + 1) % HEARTBEAT_SLOTS;
    for (const stream of this.slots[this.slot]!) stream.ping();
  }
}

const heartbeat = new Heartbeat();

function onResponseClose(this: StreamResponse): void {
  this[STREAM]?.close();
}

/**
 * Koa's `respond` reads `ctx.respond` once every middleware has returned: the moment it would have
 * started a stream body. The stream's headers and what it holds so far leave then, written straight
 * to the response (Koa stays out: no body stream, no pipeline). A request whose stream gave way to
 * an error answer (a body was set), or a HEAD request, is answered by Koa as usual.
 */
function respondOrStream(this: Context): boolean | undefined {
  const stream = (this.res as StreamResponse)[STREAM];
  if (!stream || this.body !== undefined || this.method === 'HEAD') return undefined;
  stream.start(this);
  return false;
}

type RoutedContext = Context & { matched?: unknown; captures?: unknown; params?: unknown; request: { params?: unknown } };

/**
 * Koa keeps a request's context as long as its response (its on-finished listener holds it), but once
 * every middleware is done nothing reads the request any more: its parsed body (an OpenAI client's
 * inline images), credential, the router's match and the parsed URL need not live as long as the
 * stream. What an error after the start still reads (the state's log and request id, the response) stays.
 */
function releaseRequest(ctx: Context): void {
  ctx.state.body = undefined;
  ctx.state.principal = undefined;
  const routed = ctx as RoutedContext;
  routed.matched = undefined;
  routed.captures = undefined;
  routed.params = routed.request.params = undefined;
  // parseurl's cache: parsed again if ever asked for.
  (ctx.req as { _parsedUrl?: unknown })._parsedUrl = undefined;
}

function setRespond(this: Context, value: boolean): void {
  Object.defineProperty(this, 'respond', { value, writable: true, configurable: true, enumerable: true });
}

/**
 * A server-sent-events response (DESIGN §5 framing). Its headers leave with a `: open` comment as
 * soon as the handler has returned (a waiting run may have no event for minutes); `: ping` every 15 s.
 * Written to the Node response directly: what the client has not read yet waits in the socket's
 * write buffer, as it waited in a body stream before.
 */
export class SseStream {
  private readonly res: StreamResponse;
  private readonly slot: number;
  private closed = false;
  /** Until Koa would respond, what the stream holds: the `: open` comment, then any events. */
  private pending: string | undefined = ': open\n\n';
  private closeHandlers: (() => void) | (() => void)[] | undefined;

  /** `open` holds every stream of this process, so shutdown can end them cleanly. */
  constructor(ctx: Context, headers: Record<string, string>, private readonly open: Set<SseStream>) {
    open.add(this);
    const res: StreamResponse = (this.res = ctx.res);
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
    res[STREAM] = this;
    Object.defineProperty(ctx, 'respond', { get: respondOrStream, set: setRespond, configurable: true, enumerable: true });
    this.slot = heartbeat.add(this);
    res.on('close', onResponseClose);
  }

  /** Writes the events in one chunk. */
  send(events: StoredEvent[]): void {
    let text = '';
    for (const event of events) text += `id: ${event.id}\nevent: ${event.type}\ndata: ${event.data}\n\n`;
    this.write(text);
  }

  /** One event in another protocol's framing (the OpenAI-compatible streams): `event:` only when named, no id. */
  sendFrame(data: string, event?: string): void {
    this.write(event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`);
  }

  onClose(handler: () => void): void {
    if (this.closed) handler();
    else if (this.closeHandlers === undefined) this.closeHandlers = handler;
    else if (typeof this.closeHandlers === 'function') this.closeHandlers = [this.closeHandlers, handler];
    else this.closeHandlers.push(handler);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.open.delete(this);
    heartbeat.remove(this, this.slot);
    const { res } = this;
    // Not started yet: Koa's respond sends what the stream holds, then ends it.
    if (this.pending === undefined && !res.writableEnded && !res.destroyed) res.end();
    const handlers = this.closeHandlers;
    this.closeHandlers = undefined;
    if (typeof handlers === 'function') handlers();
    else if (handlers) for (const handler of handlers) handler();
  }

  /** @internal The heartbeat's turn. */
  ping(): void {
    this.write(': ping\n\n');
  }

  /** @internal Koa's respond, every middleware done: headers, what the stream holds so far, and from now on each write as it comes. */
  start(ctx: Context): void {
    const text = this.pending;
    if (text === undefined) return;
    this.pending = undefined;
    releaseRequest(ctx);
    const { res } = this;
    if (res.destroyed) return;
    res.write(text);
    if (this.closed) res.end();
  }

  private write(text: string) {
    if (this.closed) return;
    if (this.pending !== undefined) this.pending += text;
    else if (!this.res.destroyed) this.res.write(text);
  }
}
