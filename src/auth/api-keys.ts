import type { Models, ApiKey } from '../db/models.js';
import { ForbiddenError, NotFoundError } from '../http/errors.js';
import type { Pagination } from '../http/validation.js';
import { paginate } from '../http/pagination.js';
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

/** API keys of one user. The full key exists only in the value create() returns. */
export class ApiKeyService {
  constructor(
    private readonly models: Models,
    private readonly cache: CredentialCache,
    private readonly usage: UsageRecorder,
  ) {}

  async create(userId: string, input: NewKey, grantedBy: Principal['scopes'] = null) {
    const scopes = input.scopes ?? null;
    if (!canGrant(grantedBy, parseScopes(scopes))) {
      throw new ForbiddenError('A key cannot create a key with more scopes than its own');
    }
    const key = generateApiKey();
    const row = await this.models.ApiKey.query().insertAndFetch({
      user_id: userId,
      name: input.name,
      key_prefix: apiKeyPrefix(key),
      key_hash: sha256Hex(key),
      scopes,
      expires_at: input.expires_at ?? null,
    });
    return { ...row.toInfo(), key };
  }

  async list(userId: string, page: Pagination) {
    await this.usage.flush();
    const query = this.models.ApiKey.query().where({ user_id: userId }).orderBy([{ column: 'created_at', order: 'desc' }, 'id']);
    return paginate(query, page, (row) => row.toInfo());
  }

  async update(userId: string, id: string, changes: KeyChanges) {
    const row = await this.own(userId, id);
    const updated = await row.$query().patchAndFetch({ ...changes, updated_at: new Date() });
    await this.cache.invalidateKey(row.key_hash);
    return updated.toInfo();
  }

  async remove(userId: string, id: string): Promise<void> {
    const row = await this.own(userId, id);
    await row.$query().delete();
    await this.cache.invalidateKey(row.key_hash);
  }

  private async own(userId: string, id: string): Promise<ApiKey> {
    const row = await this.models.ApiKey.query().findOne({ id, user_id: userId });
    if (!row) throw new NotFoundError('API key not found');
    return row;
  }
}
