#!/usr/bin/env node
/**
 * A model gateway for benchmarks, in its own process so its CPU is not the client's: every
 * chat-completions request is answered with the same streamed reply of `TOKENS` tokens, all
 * written at once, then usage and [DONE]. Prints `gateway listening <port>`.
 */
import { createServer } from 'node:http';

export const TOKENS = 20;

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'bench', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

const reply = [
  chunk({ role: 'assistant', content: '' }),
  ...Array.from({ length: TOKENS }, (_, i) => chunk({ content: `word${i} ` })),
  chunk({}, 'stop'),
  `data: ${JSON.stringify({ id: 'bench', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [], usage: { prompt_tokens: 10, completion_tokens: TOKENS, total_tokens: 10 + TOKENS } })}\n\n`,
  'data: [DONE]\n\n',
].join('');

if (process.argv[1]?.endsWith('stream-gateway.js')) {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(reply);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
    const address = server.address();
    console.log(`gateway listening ${typeof address === 'object' && address ? address.port : ''}`);
  });
  process.on('SIGTERM', () => process.exit(0));
}
