import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from './support/app.js';
import { takeMismatches, watchContract } from './support/contract.js';

/**
 * The contract check itself (test/support/contract.ts) must catch drift: a server that serves the
 * app's real document but answers otherwise than it says is caught on status, headers and body.
 */
let server: Server;
let url: string;

const answers: Record<string, { status: number; type?: string; body: string; headers?: Record<string, string> }> = {
  'GET /api/agents': { status: 200, type: 'application/json', body: JSON.stringify({ items: 'none', total: 0, page: 1, size: 20, pages: 0 }) },
  'GET /api/conversations': { status: 200, type: 'application/json', body: JSON.stringify({ items: [], total: 0, page: 1, size: 20, pages: 0 }) },
  'GET /api/agents/00000000-0000-4000-8000-000000000000': { status: 418, type: 'application/json', body: '{}' },
  'GET /api/auth/verify': { status: 401, type: 'application/json', body: JSON.stringify({ error: 'unauthorized', message: 'no' }) },
  'GET /healthz': { status: 200, type: 'text/plain', body: 'ok' },
  'POST /api/react': {
    status: 200,
    type: 'text/event-stream',
    headers: { 'X-Run-Id': 'r', 'X-Conversation-Id': 'c' },
    body: 'id: 1-0\nevent: token\ndata: {"iteration":0,"text":"fine"}\n\nid: 1-1\nevent: token\ndata: {"iteration":"zero"}\n\n',
  },
};

beforeAll(async () => {
  const app = await startTestApp();
  const document = (await app.request('GET', '/openapi.json')).text;
  await app.close();
  server = createServer((req, res) => {
    const answer = req.url === '/openapi.json' ? { status: 200, type: 'application/json', body: document } : answers[`${req.method} ${req.url}`];
    if (!answer) return res.writeHead(500).end();
    res.writeHead(answer.status, { 'Content-Type': answer.type ?? 'application/json', 'X-Request-Id': 'x', ...answer.headers }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await watchContract(url);
});
afterAll(() => new Promise((resolve) => server?.close(resolve)));

const read = async (method: string, path: string) => (await fetch(`${url}${path}`, { method })).text();

describe('the contract check', () => {
  it('passes a response the document describes', async () => {
    await read('GET', '/api/conversations');
    expect(takeMismatches()).toEqual([]);
  });

  it('catches a body, a status, a header and a media type the document does not describe', async () => {
    await read('GET', '/api/agents');
    await read('GET', '/api/agents/00000000-0000-4000-8000-000000000000');
    await read('GET', '/api/auth/verify');
    await read('GET', '/healthz');
    const found = takeMismatches();
    expect(found).toHaveLength(4);
    expect(found[0]).toMatch(/^GET \/api\/agents 200: the body does not match the document: \/items must be array/);
    expect(found[1]).toMatch(/^GET \/api\/agents\/\{id\} answered 418, which the document does not list/);
    expect(found[2]).toMatch(/^GET \/api\/auth\/verify 401: header WWW-Authenticate is documented as required and missing/);
    expect(found[3]).toMatch(/^GET \/healthz 200: content-type text\/plain is not documented \(application\/json\)/);
  });

  it('checks each event of a stream as the test reads it', async () => {
    await read('POST', '/api/react');
    const found = takeMismatches();
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^POST \/api\/react: event token does not match the document/);
  });
});
