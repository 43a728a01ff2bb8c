import type { RunRef, OutgoingEvent } from './protocol-types.js';
import { callScript, ProtocolPart } from './run-scripts.js';

/** The largest doorbell that carries its events (publishEvents-2.lua); a larger batch rings with its count and is read from the stream. */
const CARRIED_DOORBELL_MAX_BYTES = 16_384;

/** What a doorbell says: new entries to read from the stream, or the entries themselves and the id of the one before them. */
export type Doorbell = { carried: false } | { carried: true; previousId: string; entries: { id: string; type: string; data: string }[] };

/** A doorbell that carries nothing: read the stream from the last id. */
export const RING: Doorbell = { carried: false };

/** Reads a doorbell's message (see publishEvents-2.lua): "<previous id>\n<id>\n<type>\n<data>…", or a count. */
export function readDoorbell(message: string): Doorbell {
  const parts = message.split('\n');
  if (parts.length < 4 || (parts.length - 1) % 3 !== 0) return RING;
  const entries: { id: string; type: string; data: string }[] = [];
  for (let i = 1; i < parts.length; i += 3) entries.push({ id: parts[i]!, type: parts[i + 1]!, data: parts[i + 2]! });
  return { carried: true, previousId: parts[0]!, entries };
}

/**
 * A run's event stream (DESIGN §5: the stream is the record, its doorbell only says "new
 * entries"): the worker's attempt appends to it, readers find it and its last entry, and the web
 * drops the stream of a run it gave up or erased.
 */
export class EventStream extends ProtocolPart {
  /** The run's event stream and doorbell, for readers (the relay). */
  locate(run: RunRef): { key: string; doorbell: string } {
    return { key: this.keys.runEvents(run), doorbell: this.keys.runDoorbell(run) };
  }

  /** Worker: appends events (fenced by `owner`, idempotent per scope and seq) and rings the doorbell once, carrying them when they fit. */
  async publish(run: RunRef, owner: string, events: OutgoingEvent[]): Promise<number> {
    const { key, doorbell } = this.locate(run);
    const args = events.flatMap((e) => [e.type, e.data, e.scope, e.seq]);
    return callScript(() => this.redis.publishEvents(key, this.keys.runSequence(run), this.options.streamMaxLength, doorbell, owner, this.options.streamTtlSeconds, this.keys.doorbellCommand, CARRIED_DOORBELL_MAX_BYTES, ...args));
  }

  /** The run's last event (its id, type and data as stored), if its stream is still kept. */
  async lastEvent(run: RunRef): Promise<{ id: string; type: string; data: string } | undefined> {
    const [entry] = await this.redis.xrevrange(this.keys.runEvents(run), '+', '-', 'COUNT', 1);
    if (!entry) return undefined;
    const [id, fields] = entry;
    const field = (name: string) => (fields.includes(name) ? (fields[fields.indexOf(name) + 1] ?? '') : '');
    return { id, type: field('type'), data: field('data') || '{}' };
  }

  /** Whether the run's stream is still kept (it expires `streamTtlSeconds` after `done`). */
  async streamExists(run: RunRef): Promise<boolean> {
    return (await this.redis.exists(this.keys.runEvents(run))) === 1;
  }

  /** Web: drops the stream of a run that could not be queued, or whose data is erased. */
  async discardStream(run: RunRef): Promise<void> {
    await this.redis.del(this.keys.runEvents(run));
  }
}
