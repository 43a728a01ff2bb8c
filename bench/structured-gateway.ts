#!/usr/bin/env node
/**
 * A model gateway for the structured-outputs benchmark, in its own process: every chat-completions
 * request gets `TOKENS` streamed tokens at once, then usage and [DONE]. A request that carries
 * `response_format` gets the same number of tokens forming a JSON object (`{"words": "…"}`), so a
 * run with a schema and one without differ only by the platform's own work. Every request's body
 * is read and parsed, with or without a schema. Prints `gateway listening <port>`.
 */
import { createServer } from 'node:http';

export const TOKENS = 20;

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'bench', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

const reply = (pieces: string[]) =>
  [
    chunk({ role: 'assistant', content: '' }),
    ...pieces.map((content) => chunk({ content })),
    chunk({}, 'stop'),
    `data: ${JSON.stringify({ id: 'bench', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [], usage: { prompt_tokens: 10, completion_tokens: TOKENS, total_tokens: 10 + TOKENS } })}\n\n`,
    'data: [DONE]\n\n',
  ].join('');

const words = Array.from({ length: TOKENS }, (_, i) => `word${i} `);
const prose = reply(words);
const json = reply(['{"words": "', ...words.slice(1, -1), `${words.at(-1)!.trim()}"}`]);

if (process.argv[1]?.endsWith('structured-gateway.js')) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { response_format?: unknown };
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(body.response_format ? json : prose);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
    const address = server.address();
    console.log(`gateway listening ${typeof address === 'object' && address ? address.port : ''}`);
  });
  process.on('SIGTERM', () => process.exit(0));
}
