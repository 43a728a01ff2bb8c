import type { EventData, EventType } from './events.js';
import { STREAM_MAX_LENGTH, STREAM_TTL_AFTER_DONE_SECONDS, type RedisKeys, type ScriptedRedis } from './redis-keys.js';

/** XADD + PUBLISH in one Lua call (DESIGN §5): the stream is the record, the message only a doorbell. */
export class EventPublisher {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: RedisKeys,
  ) {}

  publish<T extends EventType>(runId: string, type: T, data: EventData<T>): Promise<string> {
    return this.redis.publishEvent(
      this.keys.runEvents(runId),
      STREAM_MAX_LENGTH,
      type,
      JSON.stringify(data),
      this.keys.runDoorbell(runId),
      type === 'done' ? STREAM_TTL_AFTER_DONE_SECONDS : 0,
    );
  }
}
