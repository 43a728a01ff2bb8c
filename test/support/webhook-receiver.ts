import { once, EventEmitter } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Socket } from 'node:net';

/** How the receiver answers a request: a status, or never (the connection is held open). */
export type ReceiverReply = number | 'hang';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A webhook receiver on 127.0.0.1 for tests: it records every request and answers each path with
 * the next reply scripted for it (200 once the script runs out).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly replies = new Map<string, ReceiverReply[]>();
  private readonly arrivals = new EventEmitter();
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server, readonly url: string) {
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '/';
        receiver!.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString(), at: Date.now() });
        receiver!.arrivals.emit('request');
        const reply = receiver!.replies.get(path)?.shift() ?? 200;
        if (reply === 'hang') return;
        res.writeHead(reply, { 'content-type': 'text/plain' });
        res.end(reply < 300 ? 'ok' : 'no');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    receiver = new WebhookReceiver(server, `http://127.0.0.1:${port}`);
    return receiver;
  }

  /** The answers to the next requests to `path`, in order. */
  script(path: string, ...replies: ReceiverReply[]): void {
    this.replies.set(path, [...(this.replies.get(path) ?? []), ...replies]);
  }

  at(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Resolves once `count` requests have arrived at `path`. */
  async waitFor(path: string, count: number): Promise<ReceivedWebhook[]> {
    while (this.at(path).length < count) await once(this.arrivals, 'request');
    return this.at(path);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.server.close();
    await once(this.server, 'close');
  }
}
