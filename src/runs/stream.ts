import type { Context } from 'koa';
import type { Run } from '../db/models.js';
import { SseStream } from '../http/sse.js';
import type { EventRelay } from './relay.js';
import { runRef } from './service.js';

/**
 * Answers the request with the run's events as SSE: those after `afterId` ("0-0" = all), then
 * live ones, until `done`. A client that leaves frees its listener; the run goes on.
 * `onFirstToken` is called once, as the first token is relayed (the first-token latency metric).
 */
export async function streamRun(ctx: Context, relay: EventRelay, openStreams: Set<SseStream>, run: Run, afterId = '0-0', onFirstToken?: () => void): Promise<void> {
  const sse = new SseStream(ctx, { 'X-Run-Id': run.id, 'X-Conversation-Id': run.conversation_id }, openStreams);
  let delivered = false;
  try {
    const stop = await relay.listen(runRef(run), afterId, (events) => {
      delivered = true;
      if (onFirstToken && events.some((event) => event.type === 'token')) {
        onFirstToken();
        onFirstToken = undefined;
      }
      const end = events.findIndex((event) => event.type === 'done');
      sse.send(end === -1 ? events : events.slice(0, end + 1));
      if (end !== -1) sse.close();
    });
    sse.onClose(stop);
    // Resumed after the last event of a finished run: nothing more will come.
    if (!delivered && afterId !== '0-0' && (await relay.endedBy(runRef(run), afterId))) sse.close();
  } catch (err) {
    sse.close();
    throw err;
  }
}
