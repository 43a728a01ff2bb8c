import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Superseded } from '../../src/shared/errors.js';
import { createEngine, eventTypes, markersOf, rowOf, startRun, succeed, takeRun, usage, type Engine } from './harness.js';

/** A run's life without a park (DESIGN §5, §22): queued → running → succeeded, failed or cancelled, row and Redis markers at each step. */
let engine: Engine;
beforeAll(async () => {
  engine = await createEngine();
});
afterAll(() => engine?.close());

const failure = { error: { code: 'boom', message: 'it broke' }, usage: usage(), durationMs: 1, model: 'local' };

describe('queued → running', () => {
  it('the claim marks the conversation and counts the run; the row is queued; taking it makes the row running under the attempt and the attempt the stream owner', async () => {
    const { ref, claim, run } = await startRun(engine);
    // The claim answers with the `run` event as the stream holds it (the web writes it from there, issue 36).
    const [[firstId, fields]] = await engine.redis.xrange(engine.keys.runEvents(ref), '-', '+');
    expect(claim).toEqual({ outcome: 'claimed', activeRunId: null, event: { id: firstId, type: 'run', data: fields![3] } });
    expect(JSON.parse(claim.event!.data)).toMatchObject({ run_id: ref.id, conversation_id: ref.conversationId, status: 'queued' });
    expect(run!.status).toBe('queued');
    expect(await markersOf(engine, ref)).toMatchObject({ active: ref.id, counted: true, owner: null, cancel: null });
    expect(await eventTypes(engine, ref)).toEqual(['run']);

    const { taken, claimed } = await takeRun(engine, ref, 1);
    expect(taken).toEqual({ cancelPending: false, waiting: [] });
    expect(claimed).toBe(true);
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'running', attempt: 1, started_at: expect.any(Date) });
    expect((await markersOf(engine, ref)).owner).toBe('1');
  });
});

describe('running → final', () => {
  it('succeeded: the end decision frees the conversation and the cap; the row, its answer message and a forgotten sequence follow', async () => {
    const { ref } = await startRun(engine);
    const { run } = await takeRun(engine, ref, 1);
    expect(await engine.worker.events.publish(ref, '1', [{ type: 'status', data: '{"status":"running"}', scope: 'main', seq: 1 }])).toBe(1);
    expect(await succeed(engine, run, 'forty-two')).toEqual({ outcome: 'finished', successor: null });
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'succeeded', answer: 'forty-two', finish_reason: 'stop', finished_at: expect.any(Date) });
    expect(await engine.knex('messages').where({ run_id: ref.id, role: 'assistant' }).pluck('content')).toEqual(['forty-two']);
    expect(await markersOf(engine, ref)).toMatchObject({ active: null, counted: false, owner: null, approvals: {} });
    // The run is over: nothing more may be published, and there is nothing to cancel.
    await expect(engine.worker.events.publish(ref, '1', [{ type: 'done', data: '{}', scope: 'end', seq: 1 }])).rejects.toBeInstanceOf(Superseded);
    expect(await engine.web.signals.cancel(ref)).toBe(false);
  });

  it('failed: release frees the conversation whatever is pending; the row records the error and no answer', async () => {
    const { ref } = await startRun(engine);
    const { run } = await takeRun(engine, ref, 1);
    expect(await engine.worker.admission.release(ref, '1')).toEqual({ outcome: 'released', successor: null });
    await engine.store.fail(run, { status: 'failed', ...failure });
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'failed', error: failure.error, answer: null });
    expect(await markersOf(engine, ref)).toMatchObject({ active: null, counted: false });
    expect(await engine.knex('messages').where({ run_id: ref.id, role: 'assistant' }).count()).toEqual([{ count: '0' }]);
  });

  it('cancelled: the accepted cancel is seen at the breakpoint and wins the end decision; the row is cancelled, and forgetting the run clears the flag', async () => {
    const { ref } = await startRun(engine);
    const { run } = await takeRun(engine, ref, 1);
    expect(await engine.web.signals.cancel(ref)).toBe('active');
    expect(await engine.worker.hold.breakpoint(ref)).toEqual({ cancelPending: true, waiting: [] });
    expect(await engine.worker.admission.finish(ref, '1')).toEqual({ outcome: 'cancel_pending', kind: 'cancel' });
    expect(await engine.worker.signals.stopKind(ref)).toBe('cancel');
    expect(await engine.worker.admission.release(ref, '1')).toEqual({ outcome: 'released', successor: null });
    await engine.store.fail(run, { status: 'cancelled', ...failure, error: null });
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'cancelled', error: null });
    expect(await markersOf(engine, ref)).toMatchObject({ active: null, counted: false, cancel: '1' });
    await engine.worker.hold.forget(ref);
    expect(await markersOf(engine, ref)).toMatchObject({ active: null, counted: false, cancel: null, owner: null });
  });

  it('an accepted cancel outlives the release: an attempt killed before the final row leaves it to the next attempt', async () => {
    const { ref } = await startRun(engine);
    await takeRun(engine, ref, 1);
    expect(await engine.web.signals.cancel(ref)).toBe('active');
    expect(await engine.worker.admission.release(ref, '1')).toEqual({ outcome: 'released', successor: null });
    // Attempt 1 dies here: the row still says running. Attempt 2 takes the run over and must still stop it.
    const { taken } = await takeRun(engine, ref, 2);
    expect(taken.cancelPending).toBe(true);
    expect(await engine.worker.signals.stopKind(ref)).toBe('cancel');
    expect(await engine.worker.admission.release(ref, '2')).toEqual({ outcome: 'released', successor: null });
  });

  it('a cancel accepted before the first take is seen by the take itself', async () => {
    const { ref } = await startRun(engine);
    expect(await engine.web.signals.cancel(ref)).toBe('active');
    const { taken } = await takeRun(engine, ref, 1);
    expect(taken.cancelPending).toBe(true);
  });

  it('a final row takes no more writes of its attempt: a second end is refused (Superseded) and the row keeps its first end', async () => {
    const { ref } = await startRun(engine);
    const { run } = await takeRun(engine, ref, 1);
    await succeed(engine, run, 'first');
    await expect(engine.store.fail(run, { status: 'failed', ...failure })).rejects.toBeInstanceOf(Superseded);
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'succeeded', answer: 'first', error: null });
    expect(await engine.store.claimAttempt(ref.id, 2)).toBe(false);
  });

  it('handing back keeps the run running for its next attempt, which is not a crash', async () => {
    const { ref } = await startRun(engine);
    const { run } = await takeRun(engine, ref, 1);
    await engine.store.handBack(run.id, 1);
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'running', handed_back: true });
    const next = await takeRun(engine, ref, 2);
    expect(next.claimed).toBe(true);
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'running', attempt: 2, handed_back: false });
    expect((await markersOf(engine, ref)).active).toBe(ref.id);
  });
});

describe('the guards of the row', () => {
  it('a parked row is no longer its attempt\'s to end or checkpoint: only a new attempt, claiming it, may', async () => {
    const { ref } = await startRun(engine);
    const { run } = await takeRun(engine, ref, 1);
    await engine.store.park(run, { usage: usage(), activeMs: 1, checkpoint: '{"version":1}' });
    await expect(engine.store.succeed(run, { answer: 'no', citations: [], finishReason: 'stop', usage: usage(), durationMs: 1, model: 'local' })).rejects.toBeInstanceOf(Superseded);
    await expect(engine.store.park(run, { usage: usage(), activeMs: 1, checkpoint: '{}' })).rejects.toBeInstanceOf(Superseded);
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'waiting', checkpoint: { version: 1 } });
    const resumed = await takeRun(engine, ref, 2);
    expect(resumed.claimed).toBe(true);
    await engine.store.fail(resumed.run, { status: 'failed', ...failure });
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'failed', attempt: 2 });
  });

  it('a final row is claimed by no attempt, however new', async () => {
    const { ref } = await startRun(engine);
    const { run } = await takeRun(engine, ref, 1);
    await engine.worker.admission.release(ref, '1');
    await engine.store.fail(run, { status: 'cancelled', ...failure, error: null });
    const late = await engine.store.load(ref.id, { messages: 10, tokens: 1000, windows: 1 }, { attempt: 9, crashes: 0 });
    expect(late!.claimed).toBe(false);
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'cancelled', attempt: 1 });
  });

  it('a row that could not be queued fails once, and only while still queued', async () => {
    const { ref } = await startRun(engine);
    await engine.store.failUnqueued(ref.id);
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'failed', error: { code: 'enqueue_failed' } });
    const taken = await startRun(engine);
    await takeRun(engine, taken.ref, 1);
    await engine.store.failUnqueued(taken.ref.id);
    expect(await rowOf(engine, taken.ref.id)).toMatchObject({ status: 'running' });
  });
});
