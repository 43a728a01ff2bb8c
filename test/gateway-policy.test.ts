import { describe, expect, it } from 'vitest';
import { backoffMs, GatewayCallError, judge, retryAfterMs } from '../src/shared/gateway-policy.js';
import { readPlan } from '../workers/models/gateway/planner.js';
import { gatewayTranscript, toolCall } from '../workers/models/gateway/transcript.js';
import { NODE_OUTPUT } from '../workers/models/types.js';

describe('gateway retry policy', () => {
  it('reads Retry-After as seconds or an HTTP date, and retry-after-ms', () => {
    const now = Date.parse('2026-11-21T10:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Sat, 21 Nov 2026 10:00:05 GMT' }), now)).toBe(5000);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250' }), now)).toBe(250);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMs(new Headers(), now)).toBeUndefined();
  });

  it('backs off exponentially, jittered within the upper half of each step', () => {
    expect([0, 1, 2, 3].map((r) => backoffMs(r, 100, () => 0))).toEqual([50, 100, 200, 400]);
    expect([0, 1, 2, 3].map((r) => backoffMs(r, 100, () => 1))).toEqual([100, 200, 400, 800]);
  });

  it('maps each status of the error table to a code, and says which are transient', () => {
    const http = (status: number, code?: string) => judge(new GatewayCallError('http', 'msg', { status, code }), 'm1');
    expect([400, 401, 404, 413].map((s) => [http(s).code, http(s).transient])).toEqual([
      ['gateway_bad_request', false],
      ['gateway_unauthorized', false],
      ['gateway_not_found', false],
      ['gateway_request_too_large', false],
    ]);
    expect([429, 500, 502, 503].map((s) => [http(s).code, http(s).transient])).toEqual([
      ['gateway_rate_limited', true],
      ['gateway_error', true],
      ['gateway_error', true],
      ['gateway_unavailable', true],
    ]);
    expect(http(503, 'model_not_found')).toMatchObject({ code: 'model_not_found', transient: false, message: expect.stringContaining('"m1"') });
    expect(http(403).transient).toBe(false);
    expect(judge(new GatewayCallError('timeout', 'silent'), 'm1')).toMatchObject({ code: 'gateway_timeout', transient: true });
    expect(judge(new GatewayCallError('malformed', 'bad'), 'm1')).toMatchObject({ code: 'gateway_bad_response', transient: true });
  });
});

describe('gateway planning and transcripts', () => {
  it('keeps a model plan runnable: unique ids, no forward or self dependencies, a synthesis over all', () => {
    const reply = 'Here: {"tasks": [{"id": "a", "task": "A", "depends_on": ["b"]}, {"id": "b", "task": "B", "depends_on": ["a", "b"]}, {"id": "a", "task": "again"}, {"id": "synthesis", "task": "x"}]}';
    expect(readPlan(reply, 'Q')).toEqual([
      { id: 'a', task: 'A', depends_on: [] },
      { id: 'b', task: 'B', depends_on: ['a'] },
      { id: 'synthesis', task: 'Combine the answers to: Q', depends_on: ['a', 'b'] },
    ]);
  });

  it('a reply that is not a plan makes the question the one task', () => {
    for (const reply of ['no json here', '{"tasks": []}', '{"tasks": [{"id": "bad id!", "task": "x"}]}', '{broken']) {
      expect(readPlan(reply, 'Why?').map((n) => n.task)).toEqual(['Why?', 'Combine the answers to: Why?']);
    }
  });

  it('folds DAG node outputs into one user message; arguments that are not an object are flagged', () => {
    const transcript = gatewayTranscript([
      { role: 'user', content: 'Q' },
      { role: 'tool', name: NODE_OUTPUT, toolCallId: 'a', content: 'four' },
      { role: 'tool', name: NODE_OUTPUT, toolCallId: 'b', content: 'nine' },
    ]);
    expect(transcript).toEqual([
      { role: 'user', content: 'Q' },
      { role: 'user', content: 'Results of the sub-tasks, to answer with:\n\nSub-task a:\nfour\n\nSub-task b:\nnine' },
    ]);
    expect(toolCall('c1', 'calculator', '{"expression":"1+1"}')).toEqual({ id: 'c1', name: 'calculator', arguments: { expression: '1+1' } });
    expect(toolCall('c2', 'calculator', '[1]').invalidArguments).toContain('not a JSON object');
    expect(toolCall('c3', 'current_time', '').arguments).toEqual({});
  });
});
