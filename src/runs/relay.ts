import { isEventType, type StoredEvent } from '../shared/events.js';
import { readDoorbell, RING, type Doorbell, type StreamEntry, type StreamReader } from '../engine/stream-reader.js';
import type { RunRef } from '../engine/types.js';
import type { RedisClient } from '../shared/redis-scripts.js';

type Deliver = (events: StoredEvent[]) => void;

interface Listener {
  lastId: string;
  deliver: Deliver;
  pumping: boolean;
  again: boolean;
  closed: boolean;
}

interface RunEntry {
  channel: string;
  streamKey: string;
  listeners: Set<Listener>;
  subscribed: Promise<unknown>;
}

const PAGE = 500;

/**
 * Relays run streams to any number of local listeners over a constant number of Redis connections
 * (DESIGN §5 step 3): one shared subscriber hears doorbells; one reader fetches new entries with
 * XRANGE from each listener's last id. Never one blocking XREAD per client. On a cluster the
 * doorbells are sharded channels (SSUBSCRIBE), heard from the master that holds the run's keys.
 */
export class EventRelay {
  private readonly runs = new Map<string, RunEntry>();
  private readonly runByChannel = new Map<string, string>();

  constructor(
    private readonly subscriber: RedisClient,
    private readonly reader: RedisClient,
    private readonly streams: StreamReader,
    private readonly onError: (err: unknown) => void,
  ) {
    const sharded = streams.sharded;
    subscriber.on(sharded ? 'smessage' : 'message', (channel: string, message: string) => {
      const runId = this.runByChannel.get(channel);
      if (runId) this.ring(runId, readDoorbell(message));
    });
    // Doorbells rung while the connection was down are lost; re-read everything from each last id.
    // (A cluster's sharded subscribers come back from a node's restart with 'subscribersReady'.)
    for (const event of sharded ? ['ready', 'subscribersReady'] : ['ready']) {
      subscriber.on(event, () => {
        for (const runId of this.runs.keys()) this.ring(runId);
      });
    }
    this.subscribe = sharded ? (channel) => subscriber.ssubscribe(channel) : (channel) => subscriber.subscribe(channel);
    this.unsubscribe = sharded ? (channel) => subscriber.sunsubscribe(channel) : (channel) => subscriber.unsubscribe(channel);
  }

  private readonly subscribe: (channel: string) => Promise<unknown>;
  private readonly unsubscribe: (channel: string) => Promise<unknown>;

  /**
   * Delivers the run's events after `afterId` ("0-0" = from the start), then live ones, until the
   * returned function is called. Subscribes before reading the backlog, so nothing falls in between.
   */
  async listen(run: RunRef, afterId: string, deliver: Deliver): Promise<() => void> {
    const runId = run.id;
    let entry = this.runs.get(runId);
    if (!entry) {
      const { key, doorbell: channel } = this.streams.locate(run);
      entry = { channel, streamKey: key, listeners: new Set(), subscribed: this.subscribe(channel) };
      this.runs.set(runId, entry);
      this.runByChannel.set(channel, runId);
    }
    const listener: Listener = { lastId: afterId, deliver, pumping: false, again: false, closed: false };
    entry.listeners.add(listener);
    try {
      await entry.subscribed;
    } catch (err) {
      this.remove(runId, listener);
      throw err;
    }
    await this.pump(entry.streamKey, listener);
    return () => this.remove(runId, listener);
  }

  /** The run's last event as stored (its id, type and data), if its stream is still kept. */
  lastEvent(run: RunRef): Promise<StreamEntry | undefined> {
    return this.streams.lastEvent(run);
  }

  /** Whether the run's stream ended (its `done` written) at or before event `afterId`: a client resuming there has seen everything. */
  async endedBy(run: RunRef, afterId: string): Promise<boolean> {
    const last = await this.lastEvent(run);
    return last?.type === 'done' && compareEventIds(last.id, afterId) <= 0;
  }

  private remove(runId: string, listener: Listener): void {
    listener.closed = true;
    const entry = this.runs.get(runId);
    if (!entry?.listeners.delete(listener) || entry.listeners.size > 0) return;
    this.runs.delete(runId);
    this.runByChannel.delete(entry.channel);
    this.unsubscribe(entry.channel).catch(this.onError);
  }

  /**
   * A doorbell that carries its entries is delivered as it is to each listener whose last id is
   * the one before them (no read); a listener that has them already ignores it; any other reads
   * the stream from its last id.
   */
  private ring(runId: string, doorbell: Doorbell = RING): void {
    const entry = this.runs.get(runId);
    for (const listener of entry?.listeners ?? []) {
      if (doorbell.carried && !listener.pumping) {
        const lastId = doorbell.entries[doorbell.entries.length - 1]!.id;
        if (compareEventIds(lastId, listener.lastId) <= 0) continue;
        if (doorbell.previousId === listener.lastId) {
          listener.lastId = lastId;
          const events = doorbell.entries.filter((e): e is StoredEvent => isEventType(e.type));
          if (events.length) listener.deliver(events);
          continue;
        }
      }
      this.pump(entry!.streamKey, listener).catch(this.onError);
    }
  }

  /** Reads forward from the listener's last id; a ring during a read makes it read again. */
  private async pump(streamKey: string, listener: Listener): Promise<void> {
    if (listener.pumping) {
      listener.again = true;
      return;
    }
    listener.pumping = true;
    try {
      do {
        listener.again = false;
        const rows = await this.reader.xrange(streamKey, `(${listener.lastId}`, '+', 'COUNT', PAGE);
        if (listener.closed) return;
        const events = rows.flatMap(([id, fields]) => toEvent(id, fields));
        if (rows.length) listener.lastId = rows[rows.length - 1]![0];
        if (events.length) listener.deliver(events);
        if (rows.length === PAGE) listener.again = true;
      } while (listener.again && !listener.closed);
    } finally {
      listener.pumping = false;
    }
  }
}

/** Orders two stream entry ids (`<ms>-<seq>`, each up to 64 bits). */
export function compareEventIds(a: string, b: string): number {
  const [aMs = 0n, aSeq = 0n] = a.split('-').map(BigInt);
  const [bMs = 0n, bSeq = 0n] = b.split('-').map(BigInt);
  return aMs !== bMs ? (aMs < bMs ? -1 : 1) : aSeq === bSeq ? 0 : aSeq < bSeq ? -1 : 1;
}

function toEvent(id: string, fields: string[]): StoredEvent[] {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!);
  const type = map.get('type');
  const data = map.get('data');
  return type && data && isEventType(type) ? [{ id, type, data }] : [];
}
