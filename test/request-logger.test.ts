import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { requestLogger } from '../src/http/middleware.js';

/**
 * A run's logger, made from its request's (src/routes/chat.ts and the other run routes), writes the
 * same lines as a child of the request's logger would, but is a child of the root: the request's
 * logger does not become its prototype, so it need not live as long as the run's stream.
 */
describe('requestLogger', () => {
  it("gives a run's logger the request id and the run's ids, as a child of the root", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const root = createLogger('info', 'web', sink);
    const request = requestLogger(root, 'req-1');
    const run = request.child({ run_id: 'run-1', conversation_id: 'conv-1' });
    request.info('request line');
    run.warn({ n: 1 }, 'run line');

    expect(Object.getPrototypeOf(run)).toBe(root);
    const [first, second] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(first).toMatchObject({ name: 'web', request_id: 'req-1', msg: 'request line' });
    expect(second).toMatchObject({ name: 'web', request_id: 'req-1', run_id: 'run-1', conversation_id: 'conv-1', n: 1, msg: 'run line', level: 40 });
    // Each binding once: the run's line is the one a child of the request's logger writes.
    expect(lines[1]!.match(/"request_id"/g)).toHaveLength(1);
    expect(lines[1]!.match(/"name"/g)).toHaveLength(1);
  });
});
