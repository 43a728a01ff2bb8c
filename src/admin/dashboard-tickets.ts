import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../shared/redis-scripts.js';
import type { RedisKeys } from '../shared/redis-keys.js';

/** Who a dashboard session belongs to: the admin, and the credential that opened it (re-checked on every request). */
export interface DashboardSession {
  userId: string;
  kind: 'jwt' | 'api_key';
  /** The JWT's session (refresh family) or the key's id. */
  ref: string;
}

/** How long a ticket can wait to be exchanged: long enough for a new tab to open, too short to be worth stealing. */
export const TICKET_TTL_S = 60;
const TICKET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * One-time tickets that let the console open the queue dashboard without a pasted credential: the
 * console asks for one with its bearer token and the dashboard exchanges it for its cookie. A ticket
 * is 256 random bits, kept in Redis under its digest for TICKET_TTL_S, and taken with GETDEL, so of
 * any number of concurrent exchanges exactly one gets the session.
 */
export class DashboardTickets {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Pick<RedisKeys, 'dashboardTicket'>,
  ) {}

  async issue(session: DashboardSession): Promise<{ ticket: string; expiresAt: Date }> {
    const ticket = randomBytes(32).toString('base64url');
    await this.redis.set(this.keys.dashboardTicket(ticket), JSON.stringify(session), 'EX', TICKET_TTL_S);
    return { ticket, expiresAt: new Date(Date.now() + TICKET_TTL_S * 1000) };
  }

  /** The session a ticket was issued for, once; undefined when it is malformed, spent or expired. */
  async redeem(ticket: string | undefined): Promise<DashboardSession | undefined> {
    if (!ticket || !TICKET_PATTERN.test(ticket)) return undefined;
    const stored = await this.redis.getdel(this.keys.dashboardTicket(ticket));
    return stored ? (JSON.parse(stored) as DashboardSession) : undefined;
  }
}
