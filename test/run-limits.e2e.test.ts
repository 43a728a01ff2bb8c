import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { ofType, stream } from './support/sse.js';

/** Every run is bounded: by the events it may publish (RUN_MAX_EVENTS) and its wall time (RUN_MAX_DURATION_S). */
let events: Stack;
let duration: Stack;
beforeAll(async () => {
  [events, duration] = await Promise.all([
    startStack({ env: { RUN_MAX_EVENTS: '12' } }),
    startStack({ env: { RUN_MAX_DURATION_S: '1', LOCAL_MODEL_TOKEN_DELAY_MS: '100' } }),
  ]);
});
afterAll(() => Promise.all([events.stop(), duration.stop()]));

const longQuestion = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');

describe('run limits', () => {
  it('a run past RUN_MAX_EVENTS ends with an error naming the limit, done failed, and frees its conversation', async () => {
    const { key } = await events.user();
    const res = await stream(`${events.url}/api/react`, { token: key, body: { q: longQuestion } });
    expect(res.status).toBe(200);
    expect(ofType(res.events, 'error')[0]!.data).toMatchObject({ code: 'run_max_events', message: expect.stringContaining('RUN_MAX_EVENTS') });
    expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'failed' } });
    // The end events are not counted: the limit cuts the loop, never the error and done.
    expect(res.events.filter((e) => e.type !== 'error' && e.type !== 'done' && e.type !== 'run').length).toBeLessThanOrEqual(12);
    const runId = res.headers.get('x-run-id')!;
    expect(await events.knex('runs').where({ id: runId }).first()).toMatchObject({ status: 'failed', error: { code: 'run_max_events' } });
    const next = await stream(`${events.url}/api/react`, { token: key, body: { q: 'What is 2+2?', conversation_id: res.headers.get('x-conversation-id') } });
    expect(next.status).toBe(200);
  });

  it('a run past RUN_MAX_DURATION_S is stopped mid-answer with an error naming the limit', async () => {
    const { key } = await duration.user();
    const res = await stream(`${duration.url}/api/react`, { token: key, body: { q: longQuestion } });
    expect(res.status).toBe(200);
    expect(ofType(res.events, 'error')[0]!.data).toMatchObject({ code: 'run_max_duration', message: expect.stringContaining('RUN_MAX_DURATION_S') });
    expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'failed' } });
    expect(ofType(res.events, 'answer')).toHaveLength(0);
    // Stopped mid-answer: the answer quotes all 40 words, and only part of it streamed.
    expect(ofType(res.events, 'token').length).toBeLessThan(40);
  });
});
