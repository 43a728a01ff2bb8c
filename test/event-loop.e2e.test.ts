import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { exchange, longHistoryBody, manyValuesBody, probeAgent, sampleHealthz } from '../bench/hostile.js';
import { percentile } from '../bench/support.js';

/**
 * DESIGN §21 (issue 32): no request blocks the web's event loop. While a 24 MB /v1 history (240
 * turns of 99,000 characters, each past the window: token counting) and large JSON bodies of small
 * values (parsing) are processed, again and again, GET /healthz keeps answering. Before the CPU
 * pool one such history held the loop for 10–50 s. DESIGN §21's figure (p99 ≤ 100 ms) is measured
 * by `npm run bench -- trust` on a quiet machine; here test files run side by side on two cores, so
 * the test holds a bound that a blocked loop (seconds) breaks and a merely busy machine does not.
 */
const P99_BOUND_MS = 500;
let stack: Stack;
let key: string;
beforeAll(async () => {
  stack = await startStack({ workers: 0 });
  ({ key } = await stack.user());
}, 120_000);
afterAll(() => stack?.stop());

const ROUNDS = 3;
/** Probes come every 10 ms: the hostile phase lasts at least this long (more rounds on a fast machine), so 300 samples fall inside it. */
const MIN_HOSTILE_MS = 3500;
const MAX_ROUNDS = 30;
const HISTORIES_AT_ONCE = 2;
const BODIES_AT_ONCE = 2;

describe('the event loop under CPU-heavy requests', () => {
  it('keeps answering GET /healthz (p99 within a bound a blocked loop breaks) while 24 MB /v1 histories and large JSON bodies are processed', async () => {
    const history = longHistoryBody();
    const values = manyValuesBody(900_000);
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const postHistory = async () => {
      const reply = await exchange(stack.url, { method: 'POST', path: '/v1/chat/completions', headers: auth, body: history });
      expect(reply.status, `${reply.status}: ${reply.text.slice(0, 300)}`).toBe(422);
      expect(JSON.parse(reply.text).error.message).toMatch(/larger than the agent's context window/);
    };
    const postValues = async () => {
      const reply = await exchange(stack.url, { method: 'POST', path: '/api/agents', headers: auth, body: values });
      expect(reply.status, `${reply.status}: ${reply.text.slice(0, 300)}`).toBe(422);
    };
    const agent = probeAgent();
    try {
      // Warm-up: the connection, the JIT, the pool's threads and their tokenizers.
      await sampleHealthz(stack.url, Promise.all([postHistory(), postValues()]), agent);
      const hostile = (async () => {
        const started = performance.now();
        for (let round = 0; round < MAX_ROUNDS && (round < ROUNDS || performance.now() - started < MIN_HOSTILE_MS); round++) {
          await Promise.all([...Array.from({ length: HISTORIES_AT_ONCE }, postHistory), ...Array.from({ length: BODIES_AT_ONCE }, postValues)]);
        }
      })();
      const samples = await sampleHealthz(stack.url, hostile, agent).catch((err: unknown) => {
        throw new Error(`a probe failed (${String(err)}); the web said:\n${stack.webs[0]!.output.join('').slice(-3000)}`);
      });
      await hostile;
      expect(samples.length).toBeGreaterThanOrEqual(300);
      const p99 = percentile(samples, 99);
      const figures = `GET /healthz p50 ${percentile(samples, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...samples).toFixed(1)} ms over ${samples.length} samples`;
      console.info(figures);
      expect(p99, figures).toBeLessThanOrEqual(P99_BOUND_MS);
    } finally {
      agent.destroy();
    }
  }, 300_000);
});
