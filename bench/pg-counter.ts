import net from 'node:net';

/** SSLRequest's code: the client asks for TLS before its real startup message. */
const SSL_REQUEST = 80877103;

/**
 * A TCP proxy in front of Postgres that counts, for the processes pointed at it, the connections
 * they open (and the most open at once), the statements they send (each simple-protocol Query 'Q',
 * BEGIN and COMMIT included, and each extended-protocol Execute 'E') and the transactions they end.
 * Postgres itself keeps no per-client statement count without pg_stat_statements preloaded.
 */
export class PgCounter {
  statements = 0;
  opened = 0;
  private idleReady = 0;
  open = 0;
  peak = 0;
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly target: { host: string; port: number }) {}

  /** Transactions: autocommitted statements and explicit transactions, each ending idle (startups aside). */
  get transactions(): number {
    return this.idleReady - this.opened;
  }

  async start(): Promise<number> {
    const server = net.createServer((client) => this.relay(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    this.server = server;
    return (server.address() as net.AddressInfo).port;
  }

  /** Peak open connections since the last reset; counts start again from now. */
  reset(): void {
    this.statements = 0;
    this.idleReady = 0;
    this.opened = 0;
    this.peak = this.open;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private relay(client: net.Socket): void {
    const upstream = net.connect(this.target);
    this.opened++;
    this.peak = Math.max(this.peak, ++this.open);
    let counted = false;
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      socket.on('close', () => {
        this.sockets.delete(socket);
        if (socket === client && !counted) {
          counted = true;
          this.open--;
        }
      });
    }
    const fromClient = this.parser(true, (type) => {
      if (type === 'Q' || type === 'E') this.statements++;
    });
    // ReadyForQuery with status idle ('I') ends an autocommitted statement, a committed (or rolled back) transaction, or the startup.
    const fromServer = this.parser(false, (type, body) => {
      if (type === 'Z' && body[0] === 0x49) this.idleReady++;
    });
    client.on('data', (chunk: Buffer) => {
      fromClient(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      fromServer(chunk);
      client.write(chunk);
    });
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
  }

  /**
   * Reads one direction's message framing across chunks: each message is a type byte and a length;
   * the client's startup messages (and an SSLRequest) have no type byte. Assumes no TLS to Postgres.
   */
  private parser(startup: boolean, onMessage: (type: string, body: Buffer) => void): (chunk: Buffer) => void {
    let pending: Buffer = Buffer.alloc(0);
    let started = !startup;
    return (chunk) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      for (;;) {
        if (!started) {
          if (pending.length < 8) return;
          const length = pending.readInt32BE(0);
          if (pending.length < length) return;
          started = pending.readInt32BE(4) !== SSL_REQUEST;
          pending = pending.subarray(length);
          continue;
        }
        if (pending.length < 5) return;
        const length = pending.readInt32BE(1);
        if (pending.length < 1 + length) return;
        onMessage(String.fromCharCode(pending[0]!), pending.subarray(5, 1 + length));
        pending = pending.subarray(1 + length);
      }
    };
  }
}
