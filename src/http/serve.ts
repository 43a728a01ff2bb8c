import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';

/** A JSON answer written straight to a socket, for requests that never reach Koa. */
function rawAnswer(socket: Duplex, status: number, error: string, message: string, extra = ''): void {
  if (!socket.writable) return;
  const body = JSON.stringify({ error, message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n${extra}\r\n${body}`,
  );
}

/**
 * The web's HTTP server. Requests Node rejects before Koa sees them (a method it does not know,
 * malformed framing, oversized headers) and CONNECT still get a DESIGN §4 body.
 */
export function serve(app: Koa, port: number, host?: string): Server {
  const server = createServer(app.callback());
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET') return socket.destroy();
    if (err.code === 'HPE_HEADER_OVERFLOW') return rawAnswer(socket, 431, 'headers_too_large', 'Request headers are too large');
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return rawAnswer(socket, 408, 'request_timeout', 'The request was not received in time');
    rawAnswer(socket, 400, 'bad_request', 'The request is not valid HTTP');
  });
  server.on('connect', (_req, socket: Duplex) => {
    rawAnswer(socket, 405, 'method_not_allowed', 'CONNECT is not supported', 'Allow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\n');
  });
  return host === undefined ? server.listen(port) : server.listen(port, host);
}
