import type { Models, ApiKey } from '../db/models.js';
import { ForbiddenError, NotFoundError } from '../shared/errors.js';
import type { Pagination } from '../http/validation.js';
import { paginate } from '../db/pagination.js';
import { listOwned } from '../db/owned.js';
import { SYSTEM_ACTOR, type Actor, type AuditEntry, type AuditLog } from '../audit/log.js';
import type { Principal } from './authenticator.js';
import type { CredentialCache } from './cache.js';
import { canGrant, parseScopes } from './scopes.js';
import { apiKeyPrefix, generateApiKey, sha256Hex } from './secrets.js';
import type { UsageRecorder } from './usage.js';
import type { BudgetLedger, TokenBudget } from '../budgets/ledger.js';
import { asksForLimit, checkKeyWithinUser, tokenUsage } from '../limits/settings.js';
import { presentAdminApiKey, presentApiKey, type ApiKeyRecord } from './records.js';

export interface NewKey {
  name: string;
  scopes?: string | null;
  expires_at?: Date | null;
  rate_limit_rpm?: number | null;
  token_budget?: TokenBudget | null;
}

export interface KeyChanges {
  name?: string;
  is_active?: boolean;
  expires_at?: Date | null;
  rate_limit_rpm?: number | null;
  token_budget?: TokenBudget | null;
}

/** Any user's keys, for administrators. */
export interface KeyFilters {
  user_id?: string;
  is_active?: boolean;
}

/** What the audit log says about a key: never the key, nor its hash. */
const described = (key: ApiKey) => ({ user_id: key.user_id, name: key.name, key_prefix: key.key_prefix, scopes: key.scopes });

/** Each changed field, before and after (the values are names, flags, dates and limits: nothing secret). */
function changesOf(before: ApiKey, changes: KeyChanges): Record<string, { from: unknown; to: unknown }> {
  const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : value);
  // Limits are compared by value (a budget is an object); undefined and null alike are "none".
  const same = (a: unknown, b: unknown) => JSON.stringify(iso(a) ?? null) === JSON.stringify(iso(b) ?? null);
  return Object.fromEntries(
    Object.entries(changes)
      .filter(([field, value]) => !same(value, before[field as keyof KeyChanges]))
      .map(([field, value]) => [field, { from: iso(before[field as keyof KeyChanges]) ?? null, to: iso(value) ?? null }]),
  );
}

/**
 * API keys: a user's own, and (for administrators) anyone's. The full key exists only in the value
 * create() returns. Every change is recorded in the audit log in the same transaction.
 */
export class ApiKeyService {
  constructor(
    private readonly models: Models,
    private readonly cache: CredentialCache,
    private readonly usage: UsageRecorder,
    private readonly audit: AuditLog,
    private readonly budgets: Pick<BudgetLedger, 'usage'>,
  ) {}

  /** The key's record: its row's fields and its budget's use this period (DESIGN §18). */
  private async info(row: ApiKey): Promise<ApiKeyRecord> {
    return presentApiKey(row, await tokenUsage(this.budgets, 'key', row));
  }

  /** A key may not allow more than its user does (DESIGN §18): 422 naming the user's limit. */
  private async checkWithinUser(userId: string, changes: KeyChanges): Promise<void> {
    if (!asksForLimit(changes)) return;
    const user = await this.models.User.query().findById(userId);
    if (user) checkKeyWithinUser(user, changes);
  }

  /** Only an admin may own a key with scope `admin`; a key can never grant more scopes than its own. */
  async create(userId: string, input: NewKey, grantedBy: Principal['scopes'] = null, actor: Actor = SYSTEM_ACTOR) {
    const scopes = input.scopes ?? null;
    const requested = parseScopes(scopes);
    if (!canGrant(grantedBy, requested)) {
      throw new ForbiddenError('A key cannot create a key with more scopes than its own');
    }
    if (requested?.includes('admin') && (await this.models.User.query().findById(userId))?.role !== 'admin') {
      throw new ForbiddenError('Only an admin may create a key with scope "admin"');
    }
    await this.checkWithinUser(userId, input);
    const key = generateApiKey();
    const row = await this.audit.transaction(actor, async (trx) => {
      const created = await this.models.ApiKey.query(trx).insertAndFetch({
        user_id: userId,
        name: input.name,
        key_prefix: apiKeyPrefix(key),
        key_hash: sha256Hex(key),
        scopes,
        expires_at: input.expires_at ?? null,
        rate_limit_rpm: input.rate_limit_rpm ?? null,
        token_budget: input.token_budget ?? null,
      });
      const details = {
        ...described(created),
        expires_at: created.expires_at?.toISOString() ?? null,
        ...(created.rate_limit_rpm !== null && { rate_limit_rpm: created.rate_limit_rpm }),
        ...(created.token_budget !== null && { token_budget: created.token_budget }),
      };
      return { result: created, entries: [{ action: 'api_key.create', targetType: 'api_key', targetId: created.id, details }] };
    });
    return { ...(await this.info(row)), key };
  }

  async list(userId: string, page: Pagination) {
    await this.usage.flush();
    const listed = await listOwned(this.models.ApiKey, userId, page, (row) => this.info(row));
    return { ...listed, items: await Promise.all(listed.items) };
  }

  /** Every user's keys, newest first, with their owner's id. */
  async listAll(filters: KeyFilters, page: Pagination) {
    await this.usage.flush();
    const query = this.models.ApiKey.query().orderBy([{ column: 'created_at', order: 'desc' }, 'id']);
    if (filters.user_id) query.where('user_id', filters.user_id);
    if (filters.is_active !== undefined) query.where('is_active', filters.is_active);
    const listed = await paginate(query, page, async (row) => presentAdminApiKey(row, await this.info(row)));
    return { ...listed, items: await Promise.all(listed.items) };
  }

  /** Changes a key of `userId`, or (no owner: an administrator) any key. */
  async update(userId: string | null, id: string, changes: KeyChanges, actor: Actor = SYSTEM_ACTOR) {
    const row = await this.find(userId, id);
    await this.checkWithinUser(row.user_id, changes);
    const updated = await this.audit.transaction(actor, async (trx) => {
      // Described before the patch: patchAndFetch updates `row` itself.
      const entry: AuditEntry = { action: 'api_key.update', targetType: 'api_key', targetId: row.id, details: { ...described(row), changes: changesOf(row, changes) } };
      const result = await row.$query(trx).patchAndFetch({ ...changes, updated_at: new Date() });
      return { result, entries: [entry] };
    });
    await this.cache.invalidateKey(row.key_hash);
    const info = await this.info(updated);
    return userId === null ? presentAdminApiKey(updated, info) : info;
  }

  /** Deletes a key of `userId`, or (no owner: an administrator) any key. */
  async remove(userId: string | null, id: string, actor: Actor = SYSTEM_ACTOR): Promise<void> {
    const row = await this.find(userId, id);
    await this.audit.transaction(actor, async (trx) => {
      await row.$query(trx).delete();
      return { result: undefined, entries: [{ action: 'api_key.delete', targetType: 'api_key', targetId: row.id, details: described(row) }] };
    });
    await this.cache.invalidateKey(row.key_hash);
  }

  private async find(userId: string | null, id: string): Promise<ApiKey> {
    const found = await this.models.ApiKey.query().findOne(userId === null ? { id } : { id, user_id: userId });
    if (!found) throw new NotFoundError('API key not found');
    return found;
  }
}
