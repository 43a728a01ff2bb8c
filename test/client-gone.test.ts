import { once } from 'node:events';
import { request, type Server } from 'node:http';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { errorResponses, jsonLastResort, requestContext } from '../src/http/middleware.js';
import { serve } from '../src/http/serve.js';

/**
 * A client that goes away mid-response is routine (a closed tab, a cancelled download): it is
 * logged at info without a stack. An error of ours after the response started stays a warning
 * with its stack. Real HTTP against the web's own middleware.
 */
let server: Server | undefined;
afterEach(async () => {
  server?.close();
  if (server) await once(server, 'close');
  server = undefined;
});

/** A server whose one route starts a response, waits until the client is gone, then fails as `after` says. */
async function start(after: (ctx: Koa.Context) => Promise<void>) {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, any>);
      done();
    },
  });
  const logger = createLogger('info', 'web', sink);
  const app = new Koa();
  jsonLastResort(app, logger);
  app.use(requestContext(logger));
  app.use(errorResponses());
  const finished = new Promise<void>((resolve) => {
    app.use(async (ctx) => {
      ctx.status = 200;
      ctx.res.write('first part\n');
      if (!ctx.req.destroyed) await once(ctx.res, 'close');
      try {
        await after(ctx);
      } finally {
        setImmediate(resolve);
      }
    });
  });
  server = serve(app, 0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const req = request({ host: '127.0.0.1', port, path: '/download' });
  req.on('error', () => undefined);
  req.end();
  const [res] = (await once(req, 'response')) as [NodeJS.ReadableStream];
  await once(res, 'data');
  req.destroy();
  await finished;
  return lines;
}

describe('a client that goes away mid-response', () => {
  it('is logged at info, without a stack', async () => {
    const lines = await start((ctx) => pipeline(Readable.from(['the rest\n']), ctx.res));
    const gone = lines.find((line) => line.msg === 'client went away before the response ended');
    expect(gone).toMatchObject({ level: 30 });
    expect(JSON.stringify(gone)).not.toMatch(/stack|at .*\.js/);
    expect(lines.some((line) => line.level >= 40)).toBe(false);
  });

  it('while an error of ours after the response started stays a warning with its stack', async () => {
    const lines = await start(async () => {
      throw new Error('the serializer broke');
    });
    const warning = lines.find((line) => line.msg === 'error after response started');
    expect(warning).toMatchObject({ level: 40, err: { message: 'the serializer broke' } });
    expect(warning!.err.stack).toContain('client-gone.test');
  });
});
