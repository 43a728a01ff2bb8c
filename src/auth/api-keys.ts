import type { Models, ApiKey } from '../db/models.js';
import { ForbiddenError, NotFoundError } from '../shared/errors.js';
import type { Pagination } from '../http/validation.js';
import { paginate } from '../http/pagination.js';
import { listOwned } from '../db/owned.js';
import { SYSTEM_ACTOR, type Actor, type AuditEntry, type AuditLog } from '../audit/log.js';
import type { Principal } from './authenticator.js';
import type { CredentialCache } from './cache.js';
import { canGrant, parseScopes } from './scopes.js';
import { apiKeyPrefix, generateApiKey, sha256Hex } from './secrets.js';
import type { UsageRecorder } from './usage.js';

export interface NewKey {
  name: string;
  scopes?: string | null;
  expires_at?: Date | null;
}

export interface KeyChanges {
  name?: string;
  is_active?: boolean;
  expires_at?: Date | null;
}

/** Any user's keys, for administrators. */
export interface KeyFilters {
  user_id?: string;
  is_active?: boolean;
}

/** What the audit log says about a key: never the key, nor its hash. */
const described = (key: ApiKey) => ({ user_id: key.user_id, name: key.name, key_prefix: key.key_prefix, scopes: key.scopes });

/** Each changed field, before and after (the values are names, flags and dates: nothing secret). */
function changesOf(before: ApiKey, changes: KeyChanges): Record<string, { from: unknown; to: unknown }> {
  const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : value);
  return Object.fromEntries(
    Object.entries(changes)
      .filter(([field, value]) => iso(value) !== iso(before[field as keyof KeyChanges]))
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
  ) {}

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
    const key = generateApiKey();
    const row = await this.audit.transaction(actor, async (trx) => {
      const created = await this.models.ApiKey.query(trx).insertAndFetch({
        user_id: userId,
        name: input.name,
        key_prefix: apiKeyPrefix(key),
        key_hash: sha256Hex(key),
        scopes,
        expires_at: input.expires_at ?? null,
      });
      const details = { ...described(created), expires_at: created.expires_at?.toISOString() ?? null };
      return { result: created, entries: [{ action: 'api_key.create', targetType: 'api_key', targetId: created.id, details }] };
    });
    return { ...row.toInfo(), key };
  }

  async list(userId: string, page: Pagination) {
    await this.usage.flush();
    return listOwned(this.models.ApiKey, userId, page, (row) => row.toInfo());
  }

  /** Every user's keys, newest first, with their owner's id. */
  async listAll(filters: KeyFilters, page: Pagination) {
    await this.usage.flush();
    const query = this.models.ApiKey.query().orderBy([{ column: 'created_at', order: 'desc' }, 'id']);
    if (filters.user_id) query.where('user_id', filters.user_id);
    if (filters.is_active !== undefined) query.where('is_active', filters.is_active);
    return paginate(query, page, (row) => ({ ...row.toInfo(), user_id: row.user_id }));
  }

  /** Changes a key of `userId`, or (no owner: an administrator) any key. */
  async update(userId: string | null, id: string, changes: KeyChanges, actor: Actor = SYSTEM_ACTOR) {
    const row = await this.find(userId, id);
    const updated = await this.audit.transaction(actor, async (trx) => {
      // Described before the patch: patchAndFetch updates `row` itself.
      const entry: AuditEntry = { action: 'api_key.update', targetType: 'api_key', targetId: row.id, details: { ...described(row), changes: changesOf(row, changes) } };
      const result = await row.$query(trx).patchAndFetch({ ...changes, updated_at: new Date() });
      return { result, entries: [entry] };
    });
    await this.cache.invalidateKey(row.key_hash);
    return userId === null ? { ...updated.toInfo(), user_id: updated.user_id } : updated.toInfo();
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
