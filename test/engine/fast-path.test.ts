import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDoorbell } from '../../src/engine/event-stream.js';
import type { OutgoingEvent } from '../../src/engine/protocol-types.js';
import { StreamReader } from '../../src/engine/stream-reader.js';
import { WorkerEngine } from '../../src/engine/worker-engine.js';
import { EventRelay } from '../../src/runs/relay.js';
import type { StoredEvent } from '../../src/shared/events.js';
import { Superseded } from '../../src/shared/errors.js';
import { createLogger } from '../../src/logger.js';
import { RunEvents } from '../../workers/runs/run-events.js';
import { createEngine, rowOf, startRun, USER_LIMIT, type Engine } from './harness.js';

/** The run path's shortcuts (issue 36): doorbells that carry their events, and a worker that starts before its claim is back. */
let engine: Engine;
beforeAll(async () => {
  engine = await createEngine();
});
afterAll(() => engine?.close());

const token = (seq: number, text = `t${seq}`): OutgoingEvent => ({ type: 'token', data: JSON.stringify({ text, iteration: 1 }), scope: 'main', seq });
const bound = { messages: 100, tokens: 100_000, windows: 1 };

/** Once subscribed to `channel` (SUBSCRIBE has answered): the next message on it. */
async function nextMessage(channel: string): Promise<{ message: Promise<string> }> {
  const subscriber = engine.connect('subscriber');
  const message = new Promise<string>((resolve) => subscriber.once('message', (_channel: string, text: string) => resolve(text)));
  await subscriber.subscribe(channel);
  return { message };
}

describe('a doorbell carries its events', () => {
  it('names the entry before them and holds each appended entry as the stream does', async () => {
    const { ref, claim } = await startRun(engine);
    await engine.worker.hold.take(ref, 1);
    const { message } = await nextMessage(engine.keys.runDoorbell(ref));
    expect(await engine.worker.events.publish(ref, '1', [token(1), token(2)])).toBe(2);
    const doorbell = readDoorbell(await message);
    const stream = await engine.redis.xrange(engine.keys.runEvents(ref), '-', '+');
    expect(doorbell).toEqual({
      carried: true,
      previousId: claim.event!.id,
      entries: stream.slice(1).map(([id, fields]) => ({ id, type: fields[1], data: fields[3] })),
    });
  });

  it('a batch larger than a doorbell carries rings with its count, and a doorbell that is not one reads as a plain ring', async () => {
    const { ref } = await startRun(engine);
    await engine.worker.hold.take(ref, 1);
    const { message } = await nextMessage(engine.keys.runDoorbell(ref));
    const large = Array.from({ length: 40 }, (_, i) => token(i + 1, 'x'.repeat(1000)));
    expect(await engine.worker.events.publish(ref, '1', large)).toBe(40);
    expect(await message).toBe('40');
    expect(readDoorbell('40')).toEqual({ carried: false });
    expect(readDoorbell('a\nb')).toEqual({ carried: false });
  });
});

describe('the relay writes carried events without reading the stream', () => {
  it('delivers every event once and in order; only a batch too large to carry, or a listener behind, is read', async () => {
    const reader = engine.connect('stream-reader');
    let reads = 0;
    const xrange = reader.xrange.bind(reader) as (...args: unknown[]) => Promise<[string, string[]][]>;
    (reader as unknown as { xrange: typeof xrange }).xrange = (...args) => {
      reads++;
      return xrange(...args);
    };
    const relay = new EventRelay(engine.connect('subscriber'), reader, new StreamReader(engine.web.events), (err) => {
      throw err;
    });
    const { ref, claim } = await startRun(engine);
    await engine.worker.hold.take(ref, 1);
    const got: StoredEvent[] = [];
    let arrived: () => void = () => {};
    const stop = await relay.listen(ref, claim.event!.id, (events) => {
      got.push(...events);
      arrived();
    });
    const delivered = (count: number) =>
      new Promise<void>((resolve) => {
        arrived = () => got.length >= count && resolve();
        arrived();
      });
    const readsAfterListen = reads;

    await engine.worker.events.publish(ref, '1', [token(1)]);
    await delivered(1);
    await engine.worker.events.publish(ref, '1', [token(2), token(3)]);
    await delivered(3);
    expect(reads).toBe(readsAfterListen);

    await engine.worker.events.publish(ref, '1', Array.from({ length: 30 }, (_, i) => token(i + 4, 'y'.repeat(1000))));
    await delivered(33);
    expect(reads).toBeGreaterThan(readsAfterListen);
    stop();

    const stream = await engine.redis.xrange(engine.keys.runEvents(ref), '-', '+');
    expect(got.map((e) => e.id)).toEqual(stream.slice(1).map(([id]) => id));
    expect(got.map((e) => JSON.parse(e.data).text.slice(0, 2))).toEqual(['t1', 't2', 't3', ...Array(30).fill('yy')]);
  });
});

describe('a run that opens its conversation starts before its claim is back', () => {
  const worker = () => new WorkerEngine(engine.store, engine.worker, createLogger('silent', 'test'));
  const storedOf = (query: string) => ({ agentId: null, mode: 'react' as const, query, userMetadata: null, docMode: null, traceId: null, scheduleId: null, questionId: randomUUID(), opensConversation: true as const });

  it('is running under the attempt at once, with nothing to read; its claim then holds in Postgres', async () => {
    const { ref } = await startRun(engine, { query: 'what is two and two' });
    const [taken, loaded] = await worker().take({ runId: ref.id, conversationId: ref.conversationId, userId: ref.userId, attempt: 1, crashes: 0, stored: storedOf('what is two and two') }, bound);
    expect(taken).toEqual({ cancelPending: false, waiting: [] });
    expect(loaded!.run).toMatchObject({ id: ref.id, status: 'running', attempt: 1, query: 'what is two and two', agent_id: null });
    expect(loaded!.history).toEqual([]);
    expect(loaded!.claimed).toBeInstanceOf(Promise);
    expect(await loaded!.claimed).toBe(true);
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'running', attempt: 1 });
  });

  it('a job whose run was given up (no row, its stream discarded) publishes nothing: its claim is refused and the stream stays gone', async () => {
    const ref = { id: randomUUID(), conversationId: randomUUID(), userId: engine.userId };
    const announced = { run_id: ref.id, conversation_id: ref.conversationId, agent_id: null, mode: 'react' as const, status: 'queued' as const, trace_id: null };
    await engine.web.admission.claim(ref, announced, USER_LIMIT);
    await engine.web.admission.release(ref);
    await engine.web.events.discardStream(ref);
    const [, loaded] = await worker().take({ runId: ref.id, conversationId: ref.conversationId, userId: ref.userId, attempt: 1, crashes: 0, stored: storedOf('q') }, bound);
    const claimed = Promise.resolve(loaded!.claimed).then((held) => {
      if (!held) throw new Superseded();
    });
    const events = new RunEvents(engine.worker.events, ref, { deterministic: false, attempt: 1 }, 100, claimed);
    void events.publish('status', { status: 'running' });
    await expect(events.flush()).rejects.toBeInstanceOf(Superseded);
    await expect(events.flush()).rejects.toBeInstanceOf(Superseded);
    expect(await engine.redis.exists(engine.keys.runEvents(ref))).toBe(0);
    expect(await rowOf(engine, ref.id)).toBeUndefined();
  });

  it('a later attempt, or a run with an agent, reads and claims first as before', async () => {
    const { ref } = await startRun(engine);
    const [, loaded] = await worker().take({ runId: ref.id, conversationId: ref.conversationId, userId: ref.userId, attempt: 2, crashes: 1, stored: storedOf('question') }, bound);
    expect(loaded!.claimed).toBe(true);
    expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'running', attempt: 2, crashes: 1 });
  });
});
