import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Models, Role, User } from '../db/models.js';
import type { Pagination } from '../http/validation.js';
import { paginate } from '../db/pagination.js';
import { ConflictError, NotFoundError, ValidationError } from '../shared/errors.js';
import type { CredentialCache } from '../auth/cache.js';
import { hashPassword } from '../auth/passwords.js';
import type { Actor, AuditEntry, AuditLog } from '../audit/log.js';
import type { WebEngine } from '../engine/web-engine.js';
import type { BudgetLedger, TokenBudget } from '../budgets/ledger.js';
import { limitChanges, tokenUsage } from '../limits/settings.js';
import { presentAdminUser, type AdminUserRecord } from '../auth/records.js';

export interface UserFilters {
  q?: string;
  role?: Role;
  is_active?: boolean;
}

export interface NewUser {
  email: string;
  name?: string;
  role: Role;
  password?: string;
}

export interface UserChanges {
  name?: string;
  role?: Role;
  is_active?: boolean;
  /** DESIGN §18: the user's JWTs' limit and the cap of its keys'. */
  rate_limit_rpm?: number | null;
  token_budget?: TokenBudget | null;
}

export interface UserAdminOptions {
  /** How long a delete waits for the user's cancelled runs to end (so their streams end with `done cancelled`). */
  drainMs: number;
  drainPollMs: number;
}

export const DEFAULT_USER_ADMIN: UserAdminOptions = { drainMs: 10_000, drainPollMs: 100 };

/** Serialises changes that could leave no active admin (two admins demoting each other at once). */
const ADMIN_ROSTER_LOCK = 0x61646d69;
const UNIQUE_VIOLATION = '23505';

const userEntry = (action: AuditEntry['action'], user: Pick<User, 'id' | 'email'>, details: Record<string, unknown> = {}): AuditEntry => ({
  action,
  targetType: 'user',
  targetId: user.id,
  details: { email: user.email, ...details },
});

function emailTaken(email: string): ValidationError {
  return new ValidationError([{ loc: ['body', 'email'], msg: 'Value error, a user with this email already exists', type: 'value_error', input: email }]);
}

/** A password for a user created without one: 144 random bits, shown once. */
const generatePassword = () => randomBytes(18).toString('base64url');

/**
 * Users as administrators manage them (DESIGN §9). Every change and its audit entries are one
 * transaction. Disabling or deleting a user reaches every web process within milliseconds (the
 * credential cache's `user:<id>` message; the authenticator checks `is_active`), revokes the user's
 * refresh families and cancels every run of the user that may still change (queued, running or
 * parked) through the run engine, as any cancel (any worker ends them).
 * The last active admin cannot be demoted, disabled or deleted.
 */
export class UserAdminService {
  constructor(
    private readonly knex: Knex,
    private readonly models: Models,
    private readonly cache: CredentialCache,
    private readonly audit: AuditLog,
    private readonly engine: Pick<WebEngine, 'cancelActiveRunsOf' | 'hasActiveRuns' | 'discardStream'>,
    private readonly budgets: Pick<BudgetLedger, 'usage'>,
    private readonly options: UserAdminOptions = DEFAULT_USER_ADMIN,
  ) {}

  /** The user as administrators see it, with its budget's use this period (DESIGN §18). */
  private async record(user: User): Promise<AdminUserRecord> {
    return presentAdminUser(user, await tokenUsage(this.budgets, 'user', user));
  }

  async list(filters: UserFilters, page: Pagination) {
    const query = this.models.User.query().orderBy([{ column: 'created_at', order: 'desc' }, 'id']);
    if (filters.q) query.whereRaw('strpos(lower(email), lower(?)) > 0', [filters.q]);
    if (filters.role) query.where('role', filters.role);
    if (filters.is_active !== undefined) query.where('is_active', filters.is_active);
    const listed = await paginate(query, page, (user) => this.record(user));
    return { ...listed, items: await Promise.all(listed.items) };
  }

  /** The user with the counts of what they own. */
  async get(id: string) {
    const user = await this.find(id);
    const count = (table: string, where = '') => `(select count(*) from ${table} where user_id = :id ${where})`;
    const { rows } = await this.knex.raw(
      `select ${count('api_keys')} as api_keys, ${count('agents')} as agents, ${count('conversations')} as conversations,
              ${count('runs')} as runs, ${count('runs', `and status in ('queued', 'running')`)} as active_runs,
              ${count('knowledge_bases')} as knowledge_bases, ${count('connectors')} as connectors`,
      { id },
    );
    const counts = Object.fromEntries(Object.entries(rows[0] as Record<string, string>).map(([name, value]) => [name, Number(value)]));
    return { ...(await this.record(user)), counts };
  }

  /** Creates a user; without a password one is generated and returned (this once). */
  async create(input: NewUser, actor: Actor) {
    const password = input.password ?? generatePassword();
    const passwordHash = await hashPassword(password);
    const name = input.name ?? input.email.split('@')[0] ?? '';
    try {
      const user = await this.audit.transaction(actor, async (trx) => {
        const created = await this.models.User.query(trx).insertAndFetch({ email: input.email, name, role: input.role, password_hash: passwordHash });
        const details = { name, role: input.role, generated: input.password === undefined };
        return { result: created, entries: [userEntry('user.create', created, details)] };
      });
      const record = await this.record(user);
      return input.password === undefined ? { ...record, password } : record;
    } catch (err) {
      const pgError = err as { code?: string; nativeError?: { code?: string } };
      if ((pgError.nativeError?.code ?? pgError.code) === UNIQUE_VIOLATION) throw emailTaken(input.email);
      throw err;
    }
  }

  async update(id: string, changes: UserChanges, actor: Actor) {
    const { before, after } = await this.audit.transaction(actor, async (trx) => {
      const locked = await this.lockForChange(trx, id, changes.role !== undefined && changes.role !== 'admin', changes.is_active === false);
      // patchAndFetch updates the instance it is called on: keep the row as it was.
      const current = locked.$clone();
      const updated = await locked.$query(trx).patchAndFetch({ ...changes, updated_at: new Date() });
      if (current.is_active && !updated.is_active) await this.revokeSessions(trx, id);
      return { result: { before: current, after: updated }, entries: changeEntries(current, updated) };
    });
    await this.cache.invalidateUser(id);
    if (before.is_active && !after.is_active) await this.cancelActiveRuns(id);
    return this.record(after);
  }

  /**
   * Disables the user first (no new runs, no credentials), cancels their runs and waits (bounded)
   * for them to end, then deletes the user and, by cascade, everything they own.
   */
  async remove(id: string, actor: Actor): Promise<void> {
    const current = await this.find(id);
    if (current.is_active) await this.update(id, { is_active: false }, actor);
    else await this.cancelActiveRuns(id);
    await this.drainRuns(id);
    await this.discardRunStreams(id);
    await this.audit.transaction(actor, async (trx) => {
      const user = await this.lockForChange(trx, id, true, true);
      await user.$query(trx).delete();
      return { result: undefined, entries: [userEntry('user.delete', user, { role: user.role })] };
    });
    await this.cache.invalidateUser(id);
  }

  /** Cancels every run of the user that may still change, as POST /api/runs/{id}/cancel does; how many. */
  cancelActiveRuns(userId: string): Promise<number> {
    return this.engine.cancelActiveRunsOf(userId);
  }

  /**
   * The user's runs' event streams leave Redis with their data (DESIGN §20): the rows go by
   * cascade (conversations, messages, runs, files, knowledge bases, keys), the streams would
   * otherwise stay until they expire. 500 runs per round, in order of the user's runs index.
   */
  private async discardRunStreams(userId: string): Promise<void> {
    let after: { at: string; id: string } | undefined;
    for (;;) {
      const query = this.knex('runs').select('id', 'conversation_id', this.knex.raw('created_at::text as at')).where('user_id', userId).orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(500);
      if (after) query.whereRaw('(created_at, id) > (?::timestamptz, ?::uuid)', [after.at, after.id]);
      const runs: { id: string; conversation_id: string; at: string }[] = await query;
      await Promise.all(runs.map((run) => this.engine.discardStream({ id: run.id, conversationId: run.conversation_id, userId })));
      if (runs.length < 500) return;
      after = runs.at(-1)!;
    }
  }

  private async find(id: string): Promise<User> {
    const user = await this.models.User.query().findById(id);
    if (!user) throw new NotFoundError('User not found');
    return user;
  }

  /**
   * The user, locked for the change. When the change would take away an active admin (`demotes`
   * or `disables` one), the admin roster is locked too and at least one other active admin must remain.
   */
  private async lockForChange(trx: Knex.Transaction, id: string, demotes: boolean, disables: boolean): Promise<User> {
    const user = await this.models.User.query(trx).findById(id).forUpdate();
    if (!user) throw new NotFoundError('User not found');
    if (user.role === 'admin' && user.is_active && (demotes || disables)) {
      await trx.raw('select pg_advisory_xact_lock(?)', [ADMIN_ROSTER_LOCK]);
      const others = await this.models.User.query(trx).where({ role: 'admin', is_active: true }).whereNot('id', id).resultSize();
      if (others === 0) throw new ConflictError('last_admin', 'This is the last active admin: make another user an admin first');
    }
    return user;
  }

  private async revokeSessions(trx: Knex.Transaction, userId: string): Promise<void> {
    await trx('refresh_tokens').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: trx.fn.now() });
  }

  /** Waits until the user has no run that may still change, or the drain time is up (a worker may be down). */
  private async drainRuns(userId: string): Promise<void> {
    const deadline = Date.now() + this.options.drainMs;
    while (Date.now() < deadline) {
      if (!(await this.engine.hasActiveRuns(userId))) return;
      await new Promise((resolve) => setTimeout(resolve, this.options.drainPollMs));
    }
  }
}

/** One audit entry per kind of change: a rename, a role change, a disable or enable, a change of limits. */
function changeEntries(before: User, after: User): AuditEntry[] {
  const entries: AuditEntry[] = [];
  if (before.name !== after.name) entries.push(userEntry('user.update', after, { name: { from: before.name, to: after.name } }));
  if (before.role !== after.role) entries.push(userEntry('user.role_change', after, { role: { from: before.role, to: after.role } }));
  if (before.is_active !== after.is_active) entries.push(userEntry(after.is_active ? 'user.enable' : 'user.disable', after));
  const limits = limitChanges(before, after);
  if (Object.keys(limits).length) entries.push(userEntry('user.update', after, limits));
  return entries;
}
