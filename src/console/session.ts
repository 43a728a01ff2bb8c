import type { components } from './api/schema';

type TokenPair = components['schemas']['TokenPair'];
export type User = TokenPair['user'];

const REFRESH_KEY = 'agent-platform.console.refresh';
/** Refresh this long before the access token expires, so a request never carries a stale one. */
const REFRESH_AHEAD_MS = 60_000;

/** Why the session ended, shown on the sign-in screen. */
export type SignOutReason = 'signed_out' | 'expired';

/**
 * The signed-in user's credentials (DESIGN §17). The access token lives only in memory. The
 * single-use refresh token is kept in this tab's sessionStorage so a reload (which resumes a
 * streaming run) keeps the session; closing the tab ends it. Refreshes are coalesced: the API
 * revokes a whole session when one refresh token is spent twice.
 */
export class Session {
  user: User | undefined;
  lastReason: SignOutReason | undefined;
  private access: { token: string; expiresAt: number } | undefined;
  private refreshing: Promise<boolean> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly storage: Storage) {}

  get accessToken(): string | undefined {
    return this.access?.token;
  }

  get isAdmin(): boolean {
    return this.user?.role === 'admin';
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resumes the tab's session after a reload, if it has one. */
  async restore(): Promise<boolean> {
    return this.storage.getItem(REFRESH_KEY) ? this.refresh() : false;
  }

  async login(email: string, password: string): Promise<void> {
    const res = await fetch('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    if (!res.ok) throw await apiFailure(res);
    this.accept((await res.json()) as TokenPair);
  }

  /** A new token pair for the stored refresh token; false (and signed out) when it is refused. */
  refresh(): Promise<boolean> {
    this.refreshing ??= this.exchange().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  signOut(reason: SignOutReason = 'signed_out'): void {
    clearTimeout(this.timer);
    this.storage.removeItem(REFRESH_KEY);
    this.access = undefined;
    this.user = undefined;
    this.lastReason = reason;
    this.notify();
  }

  private async exchange(): Promise<boolean> {
    const refreshToken = this.storage.getItem(REFRESH_KEY);
    if (!refreshToken) {
      if (this.user) this.signOut('expired');
      return false;
    }
    const res = await fetch('/api/auth/refresh', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: refreshToken }) }).catch(() => undefined);
    if (!res?.ok) {
      // A network failure keeps the refresh token for the next try; a refusal ends the session.
      if (res) this.signOut('expired');
      return false;
    }
    this.accept((await res.json()) as TokenPair);
    return true;
  }

  private accept(pair: TokenPair): void {
    this.storage.setItem(REFRESH_KEY, pair.refresh_token);
    this.access = { token: pair.access_token, expiresAt: Date.now() + pair.expires_in * 1000 };
    this.user = pair.user;
    this.lastReason = undefined;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), Math.max(1_000, pair.expires_in * 1000 - REFRESH_AHEAD_MS));
    this.notify();
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }
}

/** An API error as a person should read it: the API's message, or each invalid field. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    /** A 422's invalid fields (their `loc` without `body`), for a form to name them by its own labels. */
    readonly fields: { path: string; msg: string }[] = [],
  ) {
    super(message);
  }
}

interface ErrorBody {
  error?: string;
  message?: string;
  detail?: { loc?: (string | number)[]; msg?: string }[] | string;
}

/** DESIGN §4 bodies ({error, message}) and validation errors ({detail: [{loc, msg}]}) as one readable message. */
export function describeFailure(status: number, body: unknown): ApiError {
  const parsed = (body ?? {}) as ErrorBody;
  if (Array.isArray(parsed.detail)) {
    const fields = parsed.detail.map((d) => ({ path: (d.loc ?? []).filter((part) => part !== 'body').join('.') || 'request', msg: d.msg ?? 'invalid' }));
    return new ApiError(status, fields.map((field) => `${field.path}: ${field.msg}`).join('; '), 'validation_error', fields);
  }
  if (typeof parsed.message === 'string') return new ApiError(status, parsed.message, parsed.error);
  if (typeof parsed.detail === 'string') return new ApiError(status, parsed.detail);
  return new ApiError(status, `The server answered ${status}`);
}

export async function apiFailure(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = { message: text.slice(0, 300) || undefined };
  }
  return describeFailure(res.status, body);
}
