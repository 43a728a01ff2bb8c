#!/usr/bin/env node
/**
 * The floor a stream's memory is compared with: a bare `node:http` server, in a process of its own,
 * that answers every POST with SSE headers and one event and then holds the stream open, doing
 * nothing else. `GET` answers its `process.memoryUsage().heapUsed`. Prints `bare listening <port>`.
 */
import { createServer } from 'node:http';

const EVENT = `id: 0-1\nevent: run\ndata: ${JSON.stringify({ status: 'queued' })}\n\n`;

if (process.argv[1]?.endsWith('bare-stream-server.js')) {
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ heapUsed: process.memoryUsage().heapUsed }));
      return;
    }
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
      res.write(EVENT);
    });
  });
  server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
    const address = server.address();
    console.log(`bare listening ${typeof address === 'object' && address ? address.port : ''}`);
  });
  process.on('SIGTERM', () => process.exit(0));
}
