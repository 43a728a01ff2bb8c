import { randomUUID } from 'node:crypto';
import type { Models, User } from '../db/models.js';
import { AuthError } from '../http/errors.js';
import type { JwtService } from './jwt.js';
import { decoyPasswordHash, verifyPassword } from './passwords.js';
import { randomToken, sha256Hex } from './secrets.js';
import type { LoginThrottle } from './throttle.js';
import { findUserByEmail } from './users.js';

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: 'bearer';
  expires_in: number;
  user: ReturnType<User['toPublic']>;
}

const BAD_LOGIN = 'Incorrect email or password';

/** Login and refresh-token rotation. Refresh tokens are single use; reusing a spent one revokes its family. */
export class SessionService {
  constructor(
    private readonly models: Models,
    private readonly jwt: JwtService,
    private readonly throttle: LoginThrottle,
    private readonly refreshTtlSeconds: number,
  ) {}

  async login(email: string, password: string, address: string): Promise<TokenPair> {
    await this.throttle.check(email, address);
    const user = await findUserByEmail(this.models, email);
    const valid = await verifyPassword(password, user?.password_hash ?? (await decoyPasswordHash));
    if (!user || !valid) {
      await this.throttle.recordFailure(email, address);
      throw new AuthError('unauthorized', BAD_LOGIN);
    }
    await this.throttle.recordSuccess(email);
    return this.issue(user, randomUUID());
  }

  async refresh(refreshToken: string): Promise<TokenPair> {
    const { RefreshToken, User } = this.models;
    const row = await RefreshToken.query().findOne({ token_hash: sha256Hex(refreshToken) });
    if (!row || (await this.familyRevoked(row.family_id))) throw new AuthError('invalid_token', 'The refresh token is not valid');
    if (row.expires_at.getTime() <= Date.now()) throw new AuthError('token_expired', 'The refresh token has expired; log in again');
    // Spend it atomically: of two concurrent uses only one wins, and the loser counts as reuse.
    const spent = await RefreshToken.query().patch({ used_at: new Date() }).where({ id: row.id }).whereNull('used_at');
    if (spent === 0) {
      await RefreshToken.query().patch({ revoked_at: new Date() }).where({ family_id: row.family_id }).whereNull('revoked_at');
      throw new AuthError('invalid_token', 'The refresh token was already used; its session has been revoked');
    }
    const user = await User.query().findById(row.user_id);
    if (!user) throw new AuthError('invalid_token', 'The refresh token names no existing user');
    return this.issue(user, row.family_id);
  }

  /** Revocation is a property of the family: a token minted by a racing refresh after it is revoked is dead too. */
  private async familyRevoked(familyId: string): Promise<boolean> {
    const revoked = await this.models.RefreshToken.query().where({ family_id: familyId }).whereNotNull('revoked_at').first();
    return revoked !== undefined;
  }

  private async issue(user: User, familyId: string): Promise<TokenPair> {
    const refreshToken = randomToken();
    await this.models.RefreshToken.query().insert({
      user_id: user.id,
      family_id: familyId,
      token_hash: sha256Hex(refreshToken),
      expires_at: new Date(Date.now() + this.refreshTtlSeconds * 1000),
    });
    const { token } = await this.jwt.sign(user.id);
    return {
      access_token: token,
      refresh_token: refreshToken,
      token_type: 'bearer',
      expires_in: this.jwt.ttlSeconds,
      user: user.toPublic(),
    };
  }
}
