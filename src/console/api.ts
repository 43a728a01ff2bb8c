import createClient from 'openapi-fetch';
import type { paths } from './api/schema';
import { describeFailure, type Session } from './session';

/**
 * fetch with the session's access token. A 401 refreshes the session once and retries; a refused
 * refresh ends the session (Session.refresh), and the console returns to sign-in. (Sign-in and refresh
 * themselves go straight to fetch: src/console/session.ts.)
 */
export function authorizedFetch(session: Session): (request: Request) => Promise<Response> {
  return async (request) => {
    const retry = request.clone();
    const res = await fetch(withToken(request, session.accessToken));
    if (res.status !== 401) return res;
    if (!(await session.refresh())) return res;
    return fetch(withToken(retry, session.accessToken));
  };
}

function withToken(request: Request, token: string | undefined): Request {
  if (token) request.headers.set('authorization', `Bearer ${token}`);
  return request;
}

export type ApiClient = ReturnType<typeof makeClient>;

/** The client generated from /openapi.json (src/console/api/schema.d.ts), authorized by the session. */
export function makeClient(session: Session) {
  return createClient<paths>({ baseUrl: location.origin, fetch: authorizedFetch(session) });
}

/** The data of a call, or the API's error as a readable ApiError. */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw describeFailure(response.status, error);
  return data as T;
}
