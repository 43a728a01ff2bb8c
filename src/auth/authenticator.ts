import type { Models, User, Role } from '../db/models.js';
import { AuthError } from '../http/errors.js';
import type { CredentialCache } from './cache.js';
import type { JwtService } from './jwt.js';
import { parseScopes, type Scope } from './scopes.js';
import { constantTimeEqual, isWellFormedApiKey, looksLikeApiKey, sha256Hex } from './secrets.js';
import type { UsageRecorder } from './usage.js';

export interface Principal {
  user: { id: string; email: string; role: Role };
  kind: 'jwt' | 'api_key';
  /** null = full access (a JWT or an unscoped key). */
  scopes: Scope[] | null;
  keyId?: string;
  expiresAt: Date | null;
}

const principalUser = (user: User) => ({ id: user.id, email: user.email, role: user.role });

/** Turns a bearer credential into a Principal, or throws the spec's 401 codes. */
export class Authenticator {
  constructor(
    private readonly models: Models,
    private readonly jwt: JwtService,
    private readonly cache: CredentialCache,
    private readonly usage: UsageRecorder,
  ) {}

  async authenticate(credential: string | undefined): Promise<Principal> {
    if (!credential) throw new AuthError('unauthorized', 'Missing credentials: send Authorization: Bearer <API key or access token>');
    return looksLikeApiKey(credential) ? this.fromApiKey(credential) : this.fromJwt(credential);
  }

  private async fromApiKey(credential: string): Promise<Principal> {
    const found = await this.lookupKey(credential);
    if (!found) throw new AuthError('invalid_token', 'The API key is not valid');
    const { key, user } = found;
    if (!key.is_active) throw new AuthError('unauthorized', 'The API key is disabled');
    if (key.expires_at && key.expires_at.getTime() <= Date.now()) throw new AuthError('token_expired', 'The API key has expired');
    this.usage.record(key.id);
    return { user: principalUser(user), kind: 'api_key', scopes: parseScopes(key.scopes), keyId: key.id, expiresAt: key.expires_at };
  }

  private async lookupKey(credential: string) {
    const hash = sha256Hex(credential);
    const cached = this.cache.keys.get(hash);
    if (cached) return cached;
    // Only a key that was cached came through this check once already; the rest are checked before any query.
    if (!isWellFormedApiKey(credential)) throw new AuthError('invalid_token', 'The API key is malformed');
    // The unique index finds the row by its hash; the match is confirmed in constant time.
    const key = await this.models.ApiKey.query().findOne({ key_hash: hash });
    if (!key || !constantTimeEqual(key.key_hash, hash)) return undefined;
    const user = await this.models.User.query().findById(key.user_id);
    if (!user) return undefined;
    const entry = { key, user };
    this.cache.keys.set(hash, entry);
    return entry;
  }

  private async fromJwt(credential: string): Promise<Principal> {
    const claims = await this.jwt.verify(credential);
    let user = this.cache.users.get(claims.userId);
    if (!user) {
      user = await this.models.User.query().findById(claims.userId);
      if (!user) throw new AuthError('invalid_token', 'The access token names no existing user');
      this.cache.users.set(user.id, user);
    }
    return { user: principalUser(user), kind: 'jwt', scopes: null, expiresAt: claims.expiresAt };
  }
}
