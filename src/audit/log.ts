import type { Knex } from 'knex';
import { pageOf, type Page, type Pagination } from '../shared/pages.js';
import type { AuditRecord } from './records.js';

/**
 * Who did something, and from where: built once per request from its principal (src/auth/actor.ts),
 * or by the CLI, and handed to the service method that makes the change. Never Koa's context.
 */
export interface Actor {
  userId: string | null;
  /** "jwt", an API key's prefix, "password" (a login), "cli" or "system". */
  credential: string;
  ip: string | null;
  requestId: string | null;
}

/** Changes made by the platform itself (first boot, tests' fixtures). */
export const SYSTEM_ACTOR: Actor = { userId: null, credential: 'system', ip: null, requestId: null };
/** Changes made with agentctl on the operator's shell. */
export const CLI_ACTOR: Actor = { userId: null, credential: 'cli', ip: null, requestId: null };

export type AuditAction =
  | 'auth.login'
  | 'auth.login_failed'
  | 'auth.refresh_reuse'
  | 'api_key.create'
  | 'api_key.update'
  | 'api_key.delete'
  | 'user.create'
  | 'user.update'
  | 'user.role_change'
  | 'user.disable'
  | 'user.enable'
  | 'user.delete'
  | 'connector.create'
  | 'connector.update'
  | 'connector.delete'
  | 'webhook.create'
  | 'webhook.update'
  | 'webhook.delete'
  | 'webhook.rotate_secret'
  | 'webhook.disable'
  | 'run.cancel'
  | 'conversation.expire'
  | 'model_price.set'
  | 'model_price.delete'
  | 'dashboard.login'
  | 'dashboard.login_refused';

export interface AuditEntry {
  action: AuditAction;
  targetType?: 'user' | 'api_key' | 'connector' | 'webhook' | 'run' | 'session' | 'model_price' | 'conversation';
  targetId?: string | null;
  /** What changed, by name and non-secret value; scrubbed again on the way in. */
  details?: Record<string, unknown>;
}

export interface AuditFilters {
  actor_id?: string;
  action?: string;
  target_id?: string;
  from?: Date;
  to?: Date;
}

interface AuditRow {
  id: string;
  at: Date;
  actor_user_id: string | null;
  credential: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  request_id: string | null;
  details: Record<string, unknown>;
}

/**
 * Field names whose values are secrets, and values that look like credentials, wherever they appear.
 * `token_budget` (a count of model tokens, DESIGN §18) names no credential.
 */
const SECRET_NAME = /pass|secret|token(?!_budget$)|authorization|cookie|api[_-]?key|^key$|header_values/i;
const SECRET_VALUE = /svc_[0-9A-Za-z]{8,}|eyJ[\w-]+\.[\w-]+\.[\w-]*|whsec_\w+/;
const MAX_DEPTH = 4;

/** Defence in depth: callers pass no secrets, and anything named or shaped like one is redacted all the same. */
export function scrubSecrets(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return SECRET_VALUE.test(value) ? '[redacted]' : value.slice(0, 500);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[omitted]';
  if (Array.isArray(value)) return value.slice(0, 50).map((item) => scrubSecrets(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([name, inner]) => [name, SECRET_NAME.test(name) ? '[redacted]' : scrubSecrets(inner, depth + 1)]),
  );
}

const present = (row: AuditRow): AuditRecord => ({
  id: Number(row.id),
  at: row.at.toISOString(),
  actor_user_id: row.actor_user_id,
  credential: row.credential,
  action: row.action,
  target_type: row.target_type,
  target_id: row.target_id,
  ip: row.ip,
  request_id: row.request_id,
  details: row.details,
});

/**
 * The append-only audit log (DESIGN §9). A change and its entry are written in one transaction
 * (`record(actor, entry, trx)`), so neither exists without the other; logins and refresh reuse
 * record as the request's last act. The table refuses UPDATE and DELETE (a trigger).
 */
export class AuditLog {
  constructor(private readonly knex: Knex) {}

  async record(actor: Actor, entry: AuditEntry, trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    await this.recordAll(actor, [entry], trx);
  }

  /** Several entries of one actor in one statement (the retention job's batches). */
  async recordAll(actor: Actor, entries: AuditEntry[], trx: Knex | Knex.Transaction = this.knex): Promise<void> {
    if (entries.length === 0) return;
    await trx('audit_log').insert(
      entries.map((entry) => ({
        actor_user_id: actor.userId,
        credential: actor.credential,
        action: entry.action,
        target_type: entry.targetType ?? null,
        target_id: entry.targetId ?? null,
        ip: actor.ip,
        request_id: actor.requestId,
        details: JSON.stringify(scrubSecrets(entry.details ?? {})),
      })),
    );
  }

  /** Runs `change` and records what it returns in the same transaction. */
  async transaction<T>(actor: Actor, change: (trx: Knex.Transaction) => Promise<{ result: T; entries: AuditEntry[] }>): Promise<T> {
    return this.knex.transaction(async (trx) => {
      const { result, entries } = await change(trx);
      for (const entry of entries) await this.record(actor, entry, trx);
      return result;
    });
  }

  /** Newest first. */
  async list(filters: AuditFilters, pagination: Pagination): Promise<Page<AuditRecord>> {
    const { page, size } = pagination;
    const query = this.knex<AuditRow>('audit_log');
    if (filters.actor_id) query.where('actor_user_id', filters.actor_id);
    if (filters.action) query.where('action', filters.action);
    if (filters.target_id) query.where('target_id', filters.target_id);
    if (filters.from) query.where('at', '>=', filters.from);
    if (filters.to) query.where('at', '<', filters.to);
    const [rows, [{ count }]] = await Promise.all([
      query.clone().orderBy('id', 'desc').limit(size).offset((page - 1) * size),
      query.clone().count({ count: '*' }) as unknown as Promise<[{ count: string }]>,
    ]);
    return pageOf((rows as AuditRow[]).map(present), Number(count), pagination);
  }
}
