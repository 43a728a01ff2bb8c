import { SignJWT, jwtVerify, errors } from 'jose';
import type { Config } from '../config.js';
import { AuthError } from '../shared/errors.js';
import { TtlCache } from './cache.js';

export interface AccessClaims {
  userId: string;
  /** The session (refresh-token family) the token was issued to: revoking it revokes the token. */
  sessionId: string;
  expiresAt: Date;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** HS256 access tokens with exp/iss/aud checked and the algorithm pinned (DESIGN §3). */
export class JwtService {
  private readonly key: Uint8Array;
  /** Verified tokens, so a warm JWT costs a map lookup instead of an HMAC and two JSON parses. */
  private readonly verified = new TtlCache<string, AccessClaims>(60_000);
  constructor(private readonly config: Config['jwt']) {
    this.key = new TextEncoder().encode(config.secret);
  }

  get ttlSeconds() {
    return this.config.accessTtlSeconds;
  }

  async sign(userId: string, sessionId: string, now = Date.now()): Promise<{ token: string; expiresAt: Date }> {
    const issuedAt = Math.floor(now / 1000);
    const exp = issuedAt + this.config.accessTtlSeconds;
    const token = await new SignJWT({ sid: sessionId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(userId)
      .setIssuer(this.config.issuer)
      .setAudience(this.config.audience)
      .setIssuedAt(issuedAt)
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, expiresAt: new Date(exp * 1000) };
  }

  async verify(token: string): Promise<AccessClaims> {
    const cached = this.verified.get(token);
    if (cached && cached.expiresAt.getTime() > Date.now()) return cached;
    const claims = await this.verifySignature(token);
    this.verified.set(token, claims);
    return claims;
  }

  private async verifySignature(token: string): Promise<AccessClaims> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: this.config.issuer,
        audience: this.config.audience,
        requiredClaims: ['exp', 'sub', 'sid'],
      }));
    } catch (err) {
      if (err instanceof errors.JWTExpired) throw new AuthError('token_expired', 'The access token has expired; refresh it or log in again');
      throw new AuthError('invalid_token', 'The access token is invalid');
    }
    // Correctly signed is not enough: the ids go into queries, so they must be ids.
    const { sub, sid } = payload;
    if (typeof sub !== 'string' || !UUID.test(sub) || typeof sid !== 'string' || !UUID.test(sid)) {
      throw new AuthError('invalid_token', 'The access token is invalid');
    }
    return { userId: sub, sessionId: sid, expiresAt: new Date((payload.exp as number) * 1000) };
  }
}
