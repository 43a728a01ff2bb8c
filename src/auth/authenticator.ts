import type { Models, User, Role, ApiKey } from '../db/models.js';
import type { BudgetRef } from '../budgets/ledger.js';
import { effectiveRateLimit } from '../limits/rate-limits.js';
import { budgetOf } from '../limits/settings.js';
import { AuthError } from '../shared/errors.js';
import type { CredentialCache } from './cache.js';
import type { JwtService } from './jwt.js';
import { parseScopes, type Scope } from './scopes.js';
import { constantTimeEqual, isWellFormedApiKey, looksLikeApiKey, sha256Hex } from './secrets.js';
import type { UsageRecorder } from './usage.js';
import { sessionRevoked } from './sessions.js';

export interface Principal {
  user: { id: string; email: string; role: Role };
  kind: 'jwt' | 'api_key';
  /** null = full access (a JWT or an unscoped key). */
  scopes: Scope[] | null;
  keyId?: string;
  /** The key's first characters (its `key_prefix`), which name it in the audit log. */
  keyPrefix?: string;
  expiresAt: Date | null;
  /**
   * Requests per minute this credential may make (DESIGN §18): the lower of the key's and its user's
   * `rate_limit_rpm`, the user's alone for a JWT, else DEFAULT_RATE_LIMIT_RPM; null = not limited.
   */
  rateLimitRpm: number | null;
  /** The token budgets its runs are charged to: the key's (if set), then its user's (if set). */
  budgets: BudgetRef[];
}

export interface AuthenticatorOptions {
  /** DEFAULT_RATE_LIMIT_RPM: the limit of credentials whose key and user set none; null = none. */
  defaultRateLimitRpm: number | null;
}

const principalUser = (user: User) => ({ id: user.id, email: user.email, role: user.role });

/** A credential's limits, from the cached key and user rows (no query of their own). */
function limitsOf(user: User, key: ApiKey | undefined, defaultRpm: number | null): Pick<Principal, 'rateLimitRpm' | 'budgets'> {
  const budgets: BudgetRef[] = [];
  const keyBudget = key && budgetOf('key', key);
  if (keyBudget) budgets.push(keyBudget);
  const userBudget = budgetOf('user', user);
  if (userBudget) budgets.push(userBudget);
  return { rateLimitRpm: effectiveRateLimit(key?.rate_limit_rpm, user.rate_limit_rpm, defaultRpm), budgets };
}

/** Turns a bearer credential into a Principal, or throws the spec's 401 codes. */
export class Authenticator {
  constructor(
    private readonly models: Models,
    private readonly jwt: JwtService,
    private readonly cache: CredentialCache,
    private readonly usage: UsageRecorder,
    private readonly options: AuthenticatorOptions = { defaultRateLimitRpm: null },
  ) {}

  async authenticate(credential: string | undefined): Promise<Principal> {
    if (!credential) throw new AuthError('unauthorized', 'Missing credentials: send Authorization: Bearer <API key or access token>');
    return looksLikeApiKey(credential) ? this.fromApiKey(credential) : this.fromJwt(credential);
  }

  private async fromApiKey(credential: string): Promise<Principal> {
    const key = await this.lookupKey(credential);
    if (!key) throw new AuthError('invalid_token', 'The API key is not valid');
    const user = await this.activeUser(key.user_id, 'The API key');
    if (!key.is_active) throw new AuthError('unauthorized', 'The API key is disabled');
    if (key.expires_at && key.expires_at.getTime() <= Date.now()) throw new AuthError('token_expired', 'The API key has expired');
    this.usage.record(key.id);
    const { id: keyId, key_prefix: keyPrefix, scopes, expires_at: expiresAt } = key;
    const limits = limitsOf(user, key, this.options.defaultRateLimitRpm);
    return { user: principalUser(user), kind: 'api_key', scopes: parseScopes(scopes), keyId, keyPrefix, expiresAt, ...limits };
  }

  private async lookupKey(credential: string) {
    const hash = sha256Hex(credential);
    const cached = this.cache.keys.get(hash);
    if (cached) return cached;
    // Only a key that was cached came through this check once already; the rest are checked before any query.
    if (!isWellFormedApiKey(credential)) throw new AuthError('invalid_token', 'The API key is malformed');
    return this.cache.fill(this.cache.keys, hash, async () => {
      // The unique index finds the row by its hash; the match is confirmed in constant time.
      const key = await this.models.ApiKey.query().findOne({ key_hash: hash });
      return key && constantTimeEqual(key.key_hash, hash) ? key : undefined;
    });
  }

  private async fromJwt(credential: string): Promise<Principal> {
    const claims = await this.jwt.verify(credential);
    const { cache, models } = this;
    // The user first: a disabled user's tokens answer `unauthorized` although disabling also revoked their sessions.
    const user = await this.activeUser(claims.userId, 'The access token');
    const revoked = await cache.fill(cache.sessions, claims.sessionId, () => sessionRevoked(models, claims.sessionId));
    if (revoked) throw new AuthError('invalid_token', 'The session of this access token was revoked; log in again');
    const limits = limitsOf(user, undefined, this.options.defaultRateLimitRpm);
    return { user: principalUser(user), kind: 'jwt', scopes: null, expiresAt: claims.expiresAt, ...limits };
  }

  /**
   * The credential's user, from the cache every web process drops on a `user:<id>` message, so
   * disabling or deleting a user reaches warm keys and tokens without a query per request.
   */
  private async activeUser(userId: string, credential: string): Promise<User> {
    const { cache, models } = this;
    const user = await cache.fill(cache.users, userId, async () => await models.User.query().findById(userId));
    if (!user) throw new AuthError('invalid_token', `${credential} names no existing user`);
    if (!user.is_active) throw new AuthError('unauthorized', 'This user account is disabled');
    return user;
  }
}
