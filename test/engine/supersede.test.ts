import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Superseded } from '../../src/shared/errors.js';
import { createEngine, eventTypes, markersOf, rowOf, startRun, succeed, takeRun, usage, type Engine } from './harness.js';

/**
 * Supersede after a crash (DESIGN §5, §22): a second attempt takes the run while the first still
 * believes it holds it. Every write and publish of the first is fenced out, in Postgres and Redis.
 */
let engine: Engine;
beforeAll(async () => {
  engine = await createEngine();
});
afterAll(() => engine?.close());

const event = (seq: number, type = 'token' as const) => ({ type, data: `{"n":${seq}}`, scope: 'main', seq });

describe('a second attempt takes the run', () => {
  it("fences out the first attempt's checkpoint, park, end and publishes; the second attempt finishes the run", async () => {
    const { ref } = await startRun(engine);
    const first = await takeRun(engine, ref, 1);
    expect(await engine.worker.events.publish(ref, '1', [event(1)])).toBe(1);
    await engine.store.saveCheckpoint(ref.id, 1, '{"version":1,"by":1}');

    const second = await takeRun(engine, ref, 2, 1);
    expect(second.claimed).toBe(true);
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'running', attempt: 2, crashes: 1 });
    expect((await markersOf(engine, ref)).owner).toBe('2');

    await expect(engine.worker.events.publish(ref, '1', [event(2)])).rejects.toBeInstanceOf(Superseded);
    await expect(engine.store.saveCheckpoint(ref.id, 1, '{"version":1,"by":"stale"}')).rejects.toBeInstanceOf(Superseded);
    await expect(engine.worker.signals.requestApprovals(ref, '1', ['call'], Date.now() + 60_000, 60)).rejects.toBeInstanceOf(Superseded);
    await expect(engine.store.park(first.run, { usage: usage(), activeMs: 1, checkpoint: '{}' })).rejects.toBeInstanceOf(Superseded);
    await expect(engine.worker.admission.finish(ref, '1')).rejects.toBeInstanceOf(Superseded);
    await expect(engine.worker.admission.release(ref, '1')).rejects.toBeInstanceOf(Superseded);
    await expect(engine.store.succeed(first.run, { answer: 'stale', citations: [], finishReason: 'stop', usage: usage(), durationMs: 1, model: 'local' })).rejects.toBeInstanceOf(Superseded);
    await expect(engine.store.fail(first.run, { status: 'failed', error: null, usage: usage(), durationMs: 1, model: 'local' })).rejects.toBeInstanceOf(Superseded);

    // Nothing of the stale attempt landed: the conversation is still held, the checkpoint and stream are the first's.
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'running', attempt: 2, checkpoint: { version: 1, by: 1 } });
    expect(await markersOf(engine, ref)).toMatchObject({ active: ref.id, counted: true, approvals: {} });
    expect(await eventTypes(engine, ref)).toEqual(['run', 'token']);

    // A resumed loop publishing an event again that was already published adds nothing (idempotent per scope and seq).
    expect(await engine.worker.events.publish(ref, '2', [event(1), event(2)])).toBe(1);
    expect(await succeed(engine, second.run, 'from the second')).toEqual({ outcome: 'finished', successor: null });
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'succeeded', answer: 'from the second' });
    expect(await engine.knex('messages').where({ run_id: ref.id, role: 'assistant' }).pluck('content')).toEqual(['from the second']);
  });

  it("an older attempt's late claim changes nothing in Postgres", async () => {
    const { ref } = await startRun(engine);
    await takeRun(engine, ref, 2);
    expect(await engine.store.claimAttempt(ref.id, 1, 0)).toBe(false);
    const late = await engine.store.load(ref.id, { messages: 10, tokens: 1000, windows: 1 }, { attempt: 1, crashes: 0 });
    expect(late!.claimed).toBe(false);
    expect(await rowOf(engine, ref.id)).toMatchObject({ attempt: 2 });
  });

  it('two attempts claiming at once: the newer one owns the row, whichever order the claims land in', async () => {
    for (let i = 0; i < 20; i++) {
      const { ref } = await startRun(engine);
      const [older, newer] = await Promise.all([takeRun(engine, ref, 1), takeRun(engine, ref, 2)]);
      expect(newer.claimed).toBe(true);
      expect(await rowOf(engine, ref.id)).toMatchObject({ attempt: 2 });
      if (older.claimed) continue;
      await expect(engine.store.saveCheckpoint(ref.id, 1, '{}')).rejects.toBeInstanceOf(Superseded);
    }
  });

  /**
   * BUG (reported, issue 35): take (AttemptHold.take) sets the stream's `owner` with a plain HSET, so an older
   * attempt's take that reaches Redis after the newer one's (a worker stalled between picking the
   * job and taking it, long enough for BullMQ to hand the job on) makes the OLD attempt the owner:
   * the live attempt's publishes and end are then refused as superseded while the stale one's pass.
   * Postgres's claim only grows (`attempt < ?`); Redis's owner does too (takeAttempt-1.lua).
   */
  it("a stale attempt's take landing after the newer attempt's leaves the newer attempt the owner", async () => {
    const { ref } = await startRun(engine);
    await engine.worker.hold.take(ref, 2);
    await engine.worker.hold.take(ref, 1);
    expect((await markersOf(engine, ref)).owner).toBe('2');
    await expect(engine.worker.events.publish(ref, '1', [event(1)])).rejects.toBeInstanceOf(Superseded);
    expect(await engine.worker.events.publish(ref, '2', [event(1)])).toBe(1);
  });
});
