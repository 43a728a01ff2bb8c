/** Whether an error means Postgres or Redis could not be reached (→ 503), rather than a bug (→ 500). */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH', 'EAI_AGAIN']);
// Postgres: connection exceptions (08…), admin shutdown / crash shutdown / cannot connect now (57P0…).
const PG_OUTAGE = /^(08...|57P0[1-3])$/;
const REDIS_OUTAGE =
  /Connection is closed|enableOfflineQueue|Stream isn't writeable|Command timed out|Reached the max retries|connect ETIMEDOUT|LOADING/;

export function isDependencyOutage(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const { name, message } = err;
  const code = (err as { code?: unknown }).code;
  if (name === 'KnexTimeoutError' || name === 'MaxRetriesPerRequestError') return true;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || PG_OUTAGE.test(code))) return true;
  if (REDIS_OUTAGE.test(message)) return true;
  if (/Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(message)) return true;
  const cause = (err as { cause?: unknown }).cause;
  return cause !== undefined && cause !== err && isDependencyOutage(cause);
}
