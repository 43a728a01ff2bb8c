import { randomUUID } from 'node:crypto';
import type { Models, User } from '../db/models.js';
import { AuthError } from '../shared/errors.js';
import type { JwtService } from './jwt.js';
import type { CredentialCache } from './cache.js';
import { decoyPasswordHash, verifyPassword } from './passwords.js';
import { randomToken, sha256Hex } from './secrets.js';
import type { LoginThrottle } from './throttle.js';
import { findUserByEmail } from './users.js';
import { presentUser, type TokenPairRecord as TokenPair } from './records.js';
import type { Actor, AuditLog } from '../audit/log.js';

/** Where a login or refresh came from (the audit log's ip and request id). */
export type Origin = Pick<Actor, 'ip' | 'requestId'>;

const BAD_LOGIN = 'Incorrect email or password';

/** Revocation is a property of the family: a token minted by a racing refresh after it is revoked is dead too. */
export async function sessionRevoked(models: Models, familyId: string): Promise<boolean> {
  const revoked = await models.RefreshToken.query().where({ family_id: familyId }).whereNotNull('revoked_at').first();
  return revoked !== undefined;
}

/** Login and refresh-token rotation. Refresh tokens are single use; reusing a spent one revokes its family. */
export class SessionService {
  constructor(
    private readonly models: Models,
    private readonly jwt: JwtService,
    private readonly throttle: LoginThrottle,
    private readonly cache: CredentialCache,
    private readonly refreshTtlSeconds: number,
    private readonly audit: AuditLog,
  ) {}

  /** Each outcome is recorded in the audit log as the request's last act (a throttled attempt is not evaluated, so not recorded). */
  async login(email: string, password: string, origin: Origin): Promise<TokenPair> {
    const address = origin.ip ?? '';
    await this.throttle.check(email, address);
    const user = await findUserByEmail(this.models, email);
    const valid = await verifyPassword(password, user?.password_hash ?? (await decoyPasswordHash()));
    const attempt = { targetType: 'user' as const, targetId: user?.id ?? null };
    const actor = { userId: user?.id ?? null, credential: 'password', ...origin };
    if (!user || !valid) {
      await this.throttle.recordFailure(email, address);
      await this.audit.record(actor, { action: 'auth.login_failed', ...attempt, details: { email: email.toLowerCase(), reason: 'bad_credentials' } });
      throw new AuthError('unauthorized', BAD_LOGIN);
    }
    await this.throttle.recordSuccess(email, address);
    if (!user.is_active) {
      await this.audit.record(actor, { action: 'auth.login_failed', ...attempt, details: { email: user.email, reason: 'disabled' } });
      throw new AuthError('unauthorized', 'This user account is disabled');
    }
    const familyId = randomUUID();
    const pair = await this.issue(user, familyId);
    await this.audit.record(actor, { action: 'auth.login', ...attempt, details: { session_id: familyId } });
    return pair;
  }

  async refresh(refreshToken: string, origin: Origin): Promise<TokenPair> {
    const { RefreshToken, User } = this.models;
    const row = await RefreshToken.query().findOne({ token_hash: sha256Hex(refreshToken) });
    if (!row || (await sessionRevoked(this.models, row.family_id))) throw new AuthError('invalid_token', 'The refresh token is not valid');
    if (row.expires_at.getTime() <= Date.now()) throw new AuthError('token_expired', 'The refresh token has expired; log in again');
    // Spend it atomically: of two concurrent uses only one wins, and the loser counts as reuse.
    const spent = await RefreshToken.query().patch({ used_at: new Date() }).where({ id: row.id }).whereNull('used_at');
    if (spent === 0) {
      await RefreshToken.query().patch({ revoked_at: new Date() }).where({ family_id: row.family_id }).whereNull('revoked_at');
      // The family's access tokens (sid = family id) die with it, on every web process.
      await this.cache.invalidateSession(row.family_id);
      const actor = { userId: row.user_id, credential: 'refresh_token', ...origin };
      await this.audit.record(actor, { action: 'auth.refresh_reuse', targetType: 'session', targetId: row.family_id, details: { family_revoked: true } });
      throw new AuthError('invalid_token', 'The refresh token was already used; its session has been revoked');
    }
    const user = await User.query().findById(row.user_id);
    if (!user) throw new AuthError('invalid_token', 'The refresh token names no existing user');
    if (!user.is_active) throw new AuthError('unauthorized', 'This user account is disabled');
    return this.issue(user, row.family_id);
  }

  private async issue(user: User, familyId: string): Promise<TokenPair> {
    const refreshToken = randomToken();
    await this.models.RefreshToken.query().insert({
      user_id: user.id,
      family_id: familyId,
      token_hash: sha256Hex(refreshToken),
      expires_at: new Date(Date.now() + this.refreshTtlSeconds * 1000),
    });
    const { token } = await this.jwt.sign(user.id, familyId);
    return {
      access_token: token,
      refresh_token: refreshToken,
      token_type: 'bearer',
      expires_in: this.jwt.ttlSeconds,
      user: presentUser(user),
    };
  }
}
