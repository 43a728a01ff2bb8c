import type { Context } from 'koa';
import type { Run } from '../db/models.js';
import type { StoredEvent } from '../shared/events.js';
import type { RunRef } from '../engine/types.js';
import { SseStream } from '../http/sse.js';
import type { EventRelay } from './relay.js';
import { runRef } from './service.js';

type Deliver = (events: StoredEvent[]) => void;

/** Writes relayed events to the stream up to `done` (which closes it); `onFirstToken` is called once, at the first token. */
function writerTo(sse: SseStream, onFirstToken?: () => void): { deliver: Deliver; delivered: () => boolean } {
  let delivered = false;
  const deliver: Deliver = (events) => {
    delivered = true;
    if (onFirstToken && events.some((event) => event.type === 'token')) {
      onFirstToken();
      onFirstToken = undefined;
    }
    const end = events.findIndex((event) => event.type === 'done');
    sse.send(end === -1 ? events : events.slice(0, end + 1));
    if (end !== -1) sse.close();
  };
  return { deliver, delivered: () => delivered };
}

const streamHeaders = (run: Run) => ({ 'X-Run-Id': run.id, 'X-Conversation-Id': run.conversation_id });

/**
 * Answers the request with the run's events as SSE: those after `afterId` ("0-0" = all), then
 * live ones, until `done`. A client that leaves frees its listener; the run goes on.
 * `onFirstToken` is called once, as the first token is relayed (the first-token latency metric).
 */
export async function streamRun(ctx: Context, relay: EventRelay, openStreams: Set<SseStream>, run: Run, afterId = '0-0', onFirstToken?: () => void): Promise<void> {
  const sse = new SseStream(ctx, streamHeaders(run), openStreams);
  const writer = writerTo(sse, onFirstToken);
  try {
    const stop = await relay.listen(runRef(run), afterId, writer.deliver);
    sse.onClose(stop);
    // Resumed after the last event of a finished run: nothing more will come.
    if (!writer.delivered() && afterId !== '0-0' && (await relay.endedBy(runRef(run), afterId))) sse.close();
  } catch (err) {
    sse.close();
    throw err;
  }
}

/** Told by the run's start once its claim has published the `run` event (before its row and job are written). */
export type OnClaimed = (ref: RunRef, runEvent: StoredEvent) => void;

/**
 * Starts a run (`start`) and answers with its events as SSE (issue 36). The relay starts listening
 * once the claim has published the `run` event, beside the writes of the row and the job, so the
 * answer waits for no read of its own after them; the `run` event is written from the claim's
 * reply. The answer still waits for the row (DESIGN §21: a client that reads the run, or cancels
 * it, on its `X-Run-Id` finds it).
 */
export async function startAndStream(ctx: Context, relay: EventRelay, openStreams: Set<SseStream>, start: (onClaimed: OnClaimed) => Promise<Run>, onFirstToken?: () => void): Promise<Run> {
  const held: StoredEvent[] = [];
  let forward: Deliver = (events) => held.push(...events);
  let listening: Promise<() => void> | undefined;
  const onClaimed: OnClaimed = (ref, runEvent) => {
    held.push(runEvent);
    listening = relay.listen(ref, runEvent.id, (events) => forward(events));
    listening.catch(() => {});
  };
  let run: Run;
  try {
    run = await start(onClaimed);
  } catch (err) {
    listening?.then((stop) => stop(), () => {});
    throw err;
  }
  if (!listening) {
    await streamRun(ctx, relay, openStreams, run, '0-0', onFirstToken);
    return run;
  }
  const sse = new SseStream(ctx, streamHeaders(run), openStreams);
  try {
    sse.onClose(await listening);
  } catch (err) {
    sse.close();
    throw err;
  }
  forward = writerTo(sse, onFirstToken).deliver;
  forward(held.splice(0));
  return run;
}
