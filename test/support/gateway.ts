import { once, EventEmitter } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { embeddingsAnswer, rerankAnswer } from './fake-embeddings.js';

/**
 * A model gateway for tests, on 127.0.0.1: it speaks the three wire formats' framing and
 * answers each request with the next reply scripted for its model. It records every request.
 */

/** One SSE frame: an object is sent as `data: <json>`; the rest are sent as written. */
export type Frame = object | { raw: string } | { comment: string } | { event: string; data: unknown };

export type Reply =
  /** A plain response: an error status with its body, usually. */
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** An SSE stream; `stall` keeps the connection open after the last frame, sending nothing more. */
  | { frames: Frame[]; stall?: boolean }
  /** Takes the request and never answers. */
  | { hang: true };

export interface RecordedRequest {
  path: string;
  model: string;
  headers: IncomingHttpHeaders;
  body: any;
  at: number;
}

/** Embeddings and reranking answer like a real gateway unless a reply is scripted; every other call must be scripted. */
function defaultReply(path: string, body: unknown, model: string): Reply {
  if (path === '/v1/embeddings') return embeddingsAnswer(body);
  if (path === '/v1/rerank') return rerankAnswer(body);
  return { status: 400, body: { error: { code: 'unscripted', message: `no reply scripted for model ${model}`, type: 'test' } } };
}

const NATIVE_PATH = /^\/v1beta\/models\/([^/:]+):streamGenerateContent$/;

function frameText(frame: Frame): string {
  if ('raw' in frame && typeof frame.raw === 'string') return `data: ${frame.raw}\n\n`;
  if ('comment' in frame && typeof frame.comment === 'string') return `: ${frame.comment}\n\n`;
  if ('event' in frame && 'data' in frame && typeof frame.event === 'string') return `event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`;
  return `data: ${JSON.stringify(frame)}\n\n`;
}

export interface GatewayOptions {
  /** Answer 401 to any request that carries a key (Authorization or x-goog-api-key), like a server that takes none would if it checked. */
  refuseKeys?: boolean;
}

export class TestGateway {
  readonly requests: RecordedRequest[] = [];
  private readonly scripts = new Map<string, Reply[]>();
  private readonly sockets = new Set<Socket>();
  private readonly arrivals = new EventEmitter();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly options: GatewayOptions,
  ) {
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(options: GatewayOptions = {}): Promise<TestGateway> {
    let gateway: TestGateway | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => gateway!.answer(req.url ?? '/', req.headers, Buffer.concat(chunks).toString(), res));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    gateway = new TestGateway(server, `http://127.0.0.1:${port}`, options);
    return gateway;
  }

  /** Replies for the next requests naming `model`, in order. */
  script(model: string, ...replies: Reply[]): void {
    this.scripts.set(model, [...(this.scripts.get(model) ?? []), ...replies]);
  }

  requestsFor(model: string): RecordedRequest[] {
    return this.requests.filter((r) => r.model === model);
  }

  /** Resolves when `model` has received `count` requests. */
  async waitForRequests(model: string, count: number): Promise<void> {
    while (this.requestsFor(model).length < count) await once(this.arrivals, 'request');
  }

  private answer(url: string, headers: IncomingHttpHeaders, text: string, res: ServerResponse): void {
    const path = url.split('?')[0]!;
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    const model = decodeURIComponent(NATIVE_PATH.exec(path)?.[1] ?? String(body?.model ?? ''));
    this.requests.push({ path: url, model, headers, body, at: Date.now() });
    this.arrivals.emit('request');
    if (this.options.refuseKeys && (headers.authorization !== undefined || headers['x-goog-api-key'] !== undefined)) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'invalid_api_key', message: 'this gateway takes no key', type: 'test' } }));
      return;
    }
    const reply = this.scripts.get(model)?.shift() ?? defaultReply(path, body, model);
    if ('hang' in reply) return;
    if ('status' in reply) {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const frame of reply.frames) res.write(frameText(frame));
    if (!reply.stall) res.end();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.server.close();
    await once(this.server, 'close');
  }
}
