import { once } from 'node:events';
import type { Server } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import { afterEach, describe, expect, it } from 'vitest';
import { SseStream } from '../src/http/sse.js';
import { serve } from '../src/http/serve.js';

/**
 * An open stream lives for minutes and Koa keeps its request's context as long: once the stream has
 * started, what only the request needed (parsed body, credential, the router's match, the parsed URL)
 * is let go, while the stream goes on and an error after the start still finds the state's log.
 * Real HTTP against a Koa app routed as the web's is.
 */
let server: Server | undefined;
afterEach(async () => {
  server?.close();
  server?.closeAllConnections();
  if (server) await once(server, 'close');
  server = undefined;
});

describe('an open SSE stream', () => {
  it('lets go of what only its request needed, and still streams', async () => {
    const open = new Set<SseStream>();
    let held: Koa.Context | undefined;
    let stream: SseStream | undefined;
    const app = new Koa();
    const router = new Router();
    router.post('/runs/:id', (ctx) => {
      ctx.state.body = { q: 'x'.repeat(1000) };
      ctx.state.principal = { user: { id: 'u' } };
      ctx.state.log = 'the log';
      held = ctx;
      stream = new SseStream(ctx, { 'X-Run-Id': ctx.params.id! }, open);
    });
    app.use(router.routes());
    server = serve(app, 0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };

    const controller = new AbortController();
    const res = await fetch(`http://127.0.0.1:${port}/runs/r1?x=1`, { method: 'POST', signal: controller.signal });
    expect(res.headers.get('x-run-id')).toBe('r1');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    expect(decoder.decode((await reader.read()).value)).toBe(': open\n\n');

    const ctx = held as Koa.Context & { matched?: unknown; captures?: unknown };
    expect({ body: ctx.state.body, principal: ctx.state.principal, params: ctx.params, matched: ctx.matched, captures: ctx.captures }).toEqual({
      body: undefined,
      principal: undefined,
      params: undefined,
      matched: undefined,
      captures: undefined,
    });
    expect((ctx.req as { _parsedUrl?: unknown })._parsedUrl).toBeUndefined();
    expect(ctx.state.log).toBe('the log');
    // The path is parsed again when asked for.
    expect(ctx.path).toBe('/runs/r1');

    stream!.send([{ id: '1-0', type: 'run', data: '{"run_id":"r1"}' }]);
    expect(decoder.decode((await reader.read()).value)).toBe('id: 1-0\nevent: run\ndata: {"run_id":"r1"}\n\n');
    controller.abort();
    await expect.poll(() => open.size).toBe(0);
  });
});
