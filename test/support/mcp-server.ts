import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const everything = `${root}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
const loopback = fileURLToPath(new URL('./listen-loopback.mjs', import.meta.url));

/** The reference MCP server (@modelcontextprotocol/server-everything) as its own process on 127.0.0.1. */
export class EverythingServer {
  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
    readonly url: string,
  ) {}

  /** `streamableHttp` serves /mcp; the legacy `sse` mode serves /sse (and posts to /message). */
  static async start(mode: 'streamableHttp' | 'sse' = 'streamableHttp'): Promise<EverythingServer> {
    // A bare environment: its get-env tool would otherwise show the test process's.
    const child = spawn(process.execPath, ['--import', loopback, everything, mode], {
      env: { PATH: process.env.PATH, PORT: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let output = '';
    const port = await new Promise<number>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /loopback-listening (\d+)/.exec(output);
        if (match) resolve(Number(match[1]));
      });
      child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${output}`)));
    });
    return new EverythingServer(child, port, `http://127.0.0.1:${port}/${mode === 'sse' ? 'sse' : 'mcp'}`);
  }

  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill(signal);
    await exited;
  }
}

export interface SeenRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The first 64 KiB of the body, complete once `ended`. */
  body: string;
  ended: boolean;
}

/** A plain HTTP server on 127.0.0.1 for the cases a real MCP server does not produce; it keeps what it received. */
export class LocalServer {
  readonly requests: SeenRequest[] = [];
  private readonly server: http.Server;
  private waiters: { match: (r: SeenRequest) => boolean; resolve: (r: SeenRequest) => void }[] = [];
  port = 0;

  constructor(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
    this.server = http.createServer((req, res) => {
      const seen: SeenRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: '', ended: false };
      this.requests.push(seen);
      req.on('data', (chunk: Buffer) => {
        if (seen.body.length < 65536) seen.body += chunk.toString();
      });
      req.on('end', () => {
        seen.ended = true;
        this.arrived(seen);
      });
      handle(req, res);
    });
  }

  /** Resolves with the first request (already received or still to come) that `match` accepts, once its body is in. */
  waitFor(match: (r: SeenRequest) => boolean): Promise<SeenRequest> {
    const done = this.requests.find((r) => r.ended && match(r));
    if (done) return Promise.resolve(done);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  private arrived(request: SeenRequest) {
    const ready = this.waiters.filter((w) => w.match(request));
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const waiter of ready) waiter.resolve(request);
  }

  static start(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<LocalServer> {
    return new LocalServer(handle).listen();
  }

  private async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Accepts every request and never answers. */
  static hanging() {
    return LocalServer.start(() => {});
  }

  static redirecting(location: string) {
    return LocalServer.start((_req, res) => res.writeHead(302, { location }).end());
  }

  /** Forwards every request to `target` (streaming both ways), keeping what it saw. */
  static recordingProxy(target: string) {
    const upstream = new URL(target);
    return LocalServer.start((req, res) => {
      const forward = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
  }

  url(path = '/mcp') {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }
}
