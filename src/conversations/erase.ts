import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { SYSTEM_ACTOR, type AuditEntry, type AuditLog } from '../audit/log.js';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import type { DeletionHold, WebEngine } from '../engine/web-engine.js';
import { FINAL_RUN_STATUSES, RUN_STATUSES } from '../shared/run-statuses.js';

/** What a deleted conversation's runs keep of their error: its code, and this instead of a message that may quote content. */
export const REMOVED_TEXT = 'Removed with its conversation';

/** Run statuses that are not final: a conversation with such a run is not deleted. */
const ACTIVE_STATUSES = RUN_STATUSES.filter((status) => !(FINAL_RUN_STATUSES as readonly string[]).includes(status));
const ACTIVE_LIST = ACTIVE_STATUSES.map((status) => `'${status}'`).join(', ');
/** Whether conversation `c` has a run that is not final (bounded by the conversation: runs (conversation_id, created_at)). */
const HAS_ACTIVE_RUN = `exists (select 1 from runs r where r.conversation_id = c.id and r.status in (${ACTIVE_LIST}))`;

export interface EraseOptions {
  /** Conversations per statement of the retention job. */
  batchSize: number;
  /** Batches per retention job run: one run's work is bounded; the next tick goes on. */
  maxBatches: number;
  /** Run event streams deleted per round of Redis commands. */
  streamBatch: number;
  /** How long a deleted conversation's tombstone stays (see holdConversation-2.lua). */
  lingerSeconds: number;
  /**
   * Between two batches the job rests this many times as long as the last batch took: retention
   * is never urgent, and live runs share Postgres and the worker with it (1: at most half of them).
   */
  restRatio: number;
}

export const DEFAULT_ERASE: EraseOptions = { batchSize: 500, maxBatches: 20, streamBatch: 500, lingerSeconds: 30, restRatio: 1 };

export interface ExpireOutcome {
  /** Conversations deleted. */
  deleted: number;
  /** Idle conversations left because a run was active or waiting on them (or another job had them). */
  skipped: number;
  batches: number;
}

interface Candidate {
  id: string;
  user_id: string;
}
interface ErasedRow {
  kind: 'conversation' | 'run';
  id: string;
  user_id: string;
  conversation_id: string;
  updated_at: string | null;
}
/** A Postgres array literal of ids (knex would spread a JS array binding into a list); ids only ever come from the database. */
const uuidArray = (ids: string[]) => `{${ids.join(',')}}`;

const busy = () => new ConflictError('conversation_busy', 'This conversation has an active run; cancel it or wait for it to end, then delete it');

/**
 * Deleting conversations for good (DESIGN §20), by their owner (DELETE /api/conversations/{id})
 * or by the retention job: the messages go (cascade), the runs stay for usage without content
 * (query, answer, checkpoint and the error's text; their webhook deliveries' answers too), and the
 * runs' event streams leave Redis.
 *
 * A conversation with an active or queued run is never deleted: first the Redis hold (one script:
 * no active-run marker and no queue → the marker becomes a tombstone no run can claim past), then,
 * under the row's lock, no run that Postgres still counts as active (one whose end is being
 * written). Nothing is deleted when either refuses.
 */
export class ConversationEraser {
  constructor(
    private readonly knex: Knex,
    private readonly engine: Pick<WebEngine, 'holdForDeletion' | 'discardStream'>,
    private readonly audit: AuditLog,
    readonly options: EraseOptions = DEFAULT_ERASE,
  ) {}

  /** The owner's DELETE: 404 for another user's or a missing one, 409 conversation_busy while a run is active. */
  async remove(userId: string, id: string): Promise<void> {
    const found = await this.knex('conversations').first('id').where({ id, user_id: userId });
    if (!found) throw new NotFoundError('Conversation not found', 'Conversation');
    const hold = await this.engine.holdForDeletion(userId, id);
    if (!hold) throw busy();
    let runs: ErasedRow[];
    try {
      runs = await this.knex.transaction(async (trx) => {
        const { rows } = await trx.raw(`select c.id, ${HAS_ACTIVE_RUN} as busy from conversations c where c.id = ? and c.user_id = ? for update of c`, [id, userId]);
        const row = rows[0] as { id: string; busy: boolean } | undefined;
        if (!row) throw new NotFoundError('Conversation not found', 'Conversation');
        if (row.busy) throw busy();
        return (await this.eraseLocked(trx, [id])).filter((erased) => erased.kind === 'run');
      });
    } catch (err) {
      await hold.release().catch(() => {});
      throw err;
    }
    await this.discardStreams(runs);
    await hold.linger(this.options.lingerSeconds).catch(() => {});
  }

  /**
   * The retention job: deletes conversations not updated for `retentionDays`, oldest first, in
   * batches of `batchSize` (at most `maxBatches`), each conversation with a `conversation.expire`
   * audit entry in its batch's transaction. Several jobs at once delete each conversation once:
   * the Redis hold and `for update skip locked` give each to one of them.
   */
  async expireIdle(retentionDays: number, now = new Date()): Promise<ExpireOutcome> {
    const cutoff = new Date(now.getTime() - retentionDays * 24 * 3600 * 1000);
    const outcome: ExpireOutcome = { deleted: 0, skipped: 0, batches: 0 };
    let after: { at: string; id: string } | undefined;
    while (outcome.batches < this.options.maxBatches) {
      const { rows } = await this.knex.raw(
        `select c.id, c.user_id, c.updated_at::text as at from conversations c
          where c.updated_at < ? ${after ? 'and (c.updated_at, c.id) > (?::timestamptz, ?::uuid)' : ''} and not ${HAS_ACTIVE_RUN}
          order by c.updated_at, c.id limit ?`,
        [cutoff, ...(after ? [after.at, after.id] : []), this.options.batchSize],
      );
      const candidates = rows as (Candidate & { at: string })[];
      if (candidates.length === 0) break;
      outcome.batches += 1;
      const last = candidates.at(-1)!;
      after = { at: last.at, id: last.id };
      const started = performance.now();
      const deleted = await this.expireBatch(candidates, cutoff, retentionDays);
      outcome.deleted += deleted;
      outcome.skipped += candidates.length - deleted;
      if (candidates.length < this.options.batchSize || outcome.batches >= this.options.maxBatches) break;
      if (this.options.restRatio > 0) await sleep((performance.now() - started) * this.options.restRatio);
    }
    return outcome;
  }

  private async expireBatch(candidates: Candidate[], cutoff: Date, retentionDays: number): Promise<number> {
    const holds = new Map<string, DeletionHold>();
    await Promise.all(
      candidates.map(async ({ id, user_id }) => {
        const hold = await this.engine.holdForDeletion(user_id, id);
        if (hold) holds.set(id, hold);
      }),
    );
    if (holds.size === 0) return 0;
    let erased: ErasedRow[] = [];
    try {
      erased = await this.knex.transaction(async (trx) => {
        const { rows } = await trx.raw(
          `select c.id from conversations c where c.id = any(?::uuid[]) and c.updated_at < ? and not ${HAS_ACTIVE_RUN} for update of c skip locked`,
          [uuidArray([...holds.keys()]), cutoff],
        );
        const locked = (rows as { id: string }[]).map((row) => row.id);
        if (locked.length === 0) return [];
        const gone = await this.eraseLocked(trx, locked);
        const entries: AuditEntry[] = gone
          .filter((row) => row.kind === 'conversation')
          .map((row) => ({ action: 'conversation.expire', targetType: 'conversation', targetId: row.id, details: { user_id: row.user_id, updated_at: row.updated_at, retention_days: retentionDays } }));
        await this.audit.recordAll(SYSTEM_ACTOR, entries, trx);
        return gone;
      });
    } catch (err) {
      await Promise.all([...holds.values()].map((hold) => hold.release().catch(() => {})));
      throw err;
    }
    await this.discardStreams(erased.filter((row) => row.kind === 'run'));
    const deleted = new Set(erased.filter((row) => row.kind === 'conversation').map((row) => row.id));
    await Promise.all(
      [...holds].map(([id, hold]) => (deleted.has(id) ? hold.linger(this.options.lingerSeconds) : hold.release()).catch(() => {})),
    );
    return deleted.size;
  }

  /**
   * One statement: the conversations (locked by the caller) go with their messages (cascade);
   * their runs lose their content, and so do the webhook deliveries of those runs. The deleted
   * conversations and the scrubbed runs come back.
   */
  private async eraseLocked(trx: Knex.Transaction, ids: string[]): Promise<ErasedRow[]> {
    const { rows } = await trx.raw(
      `with gone as (
         delete from conversations where id = any(?::uuid[]) returning id, user_id, updated_at
       ), scrubbed as (
         update runs r set query = null, answer = null, checkpoint = null,
           error = case when r.error is null then null else jsonb_build_object('code', r.error->>'code', 'message', ?::text) end
         from gone where r.conversation_id = gone.id
         returning r.id, r.user_id, r.conversation_id
       ), deliveries as (
         update webhook_deliveries d set payload = jsonb_set(d.payload, '{data}', (d.payload->'data') || jsonb_build_object(
             'answer', null,
             'error', case when jsonb_typeof(d.payload->'data'->'error') = 'object'
                           then jsonb_build_object('code', d.payload->'data'->'error'->>'code', 'message', ?::text)
                           else d.payload->'data'->'error' end))
         from scrubbed where d.run_id = scrubbed.id and jsonb_typeof(d.payload->'data') = 'object'
         returning d.id
       )
       select 'conversation' as kind, id, user_id, id as conversation_id, updated_at::text as updated_at from gone
       union all
       select 'run', id, user_id, conversation_id, null from scrubbed`,
      [uuidArray(ids), REMOVED_TEXT, REMOVED_TEXT],
    );
    return rows as ErasedRow[];
  }

  /** The runs' event streams leave Redis, `streamBatch` commands at a time. */
  private async discardStreams(runs: ErasedRow[]): Promise<void> {
    for (let i = 0; i < runs.length; i += this.options.streamBatch) {
      const batch = runs.slice(i, i + this.options.streamBatch);
      await Promise.all(batch.map((run) => this.engine.discardStream({ id: run.id, userId: run.user_id, conversationId: run.conversation_id })));
    }
  }
}
