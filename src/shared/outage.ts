/**
 * Whether an error came from Postgres or Redis rather than from a bug, and if so which kind of
 * failure it is (DESIGN §12 "Overload is not an outage"):
 * - `saturated`: the dependency answers, but not soon enough for this request (a full pool, a
 *   command backlog, a slow query) → the web answers 429 with Retry-After;
 * - `unreachable`: it cannot be reached at all → 503 with Retry-After.
 * Workers treat both alike: the run goes back to the queue and is tried again shortly.
 */
export interface DependencyFailure {
  kind: 'saturated' | 'unreachable';
  dependency: 'postgres' | 'redis';
  /** What happened, for the log line (never a secret: messages of pg, tarn and ioredis). */
  cause: string;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH', 'EAI_AGAIN']);
// Postgres: connection exceptions (08…), admin shutdown / crash shutdown / cannot connect now (57P0…).
const PG_UNREACHABLE = /^(08...|57P0[1-3])$/;
// Postgres: too many connections and other insufficient resources (53…), a statement cancelled by a timeout.
const PG_SATURATED = /^(53...|57014)$/;
const PG_UNREACHABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/;
const REDIS_UNREACHABLE = /Connection is closed|enableOfflineQueue|Stream isn't writeable|Reached the max retries|connect ETIMEDOUT|LOADING/;
/** tarn's message when a pool acquire timed out with no failed connection attempt behind it: every connection was busy. */
const POOL_BUSY = 'operation timed out for an unknown reason';
/**
 * pg's own connect timeout: Postgres took the connection but did not finish the handshake in time (or our event
 * loop was too busy to read its answer). A stopped Postgres refuses at once (ECONNREFUSED), so this is slowness.
 */
const PG_CONNECT_TIMED_OUT = 'timeout expired';
const MAX_CAUSE_DEPTH = 8;

function classifyOne(err: Error): DependencyFailure | undefined {
  const { name, message } = err;
  const code = (err as { code?: unknown }).code;
  if (name === 'KnexTimeoutError') {
    // knex wraps tarn's timeout; tarn names the failed connection attempt, if there was one, as its message.
    const reason = (err as { cause?: unknown }).cause instanceof Error ? ((err as { cause: Error }).cause.message) : POOL_BUSY;
    return reason === POOL_BUSY
      ? { kind: 'saturated', dependency: 'postgres', cause: 'connection pool busy: no connection free within the wait' }
      : { kind: 'unreachable', dependency: 'postgres', cause: `could not connect: ${reason}` };
  }
  if (name === 'MaxRetriesPerRequestError') return { kind: 'unreachable', dependency: 'redis', cause: message };
  // knex puts the statement in front of a query's error message ("select … - Query read timeout").
  if (/Query read timeout$/.test(message)) return { kind: 'saturated', dependency: 'postgres', cause: 'query timed out' };
  if (message === PG_CONNECT_TIMED_OUT) return { kind: 'saturated', dependency: 'postgres', cause: 'connecting timed out' };
  if (typeof code === 'string' && PG_SATURATED.test(code)) return { kind: 'saturated', dependency: 'postgres', cause: `${code}: ${withoutStatement(message)}` };
  if (typeof code === 'string' && PG_UNREACHABLE.test(code)) return { kind: 'unreachable', dependency: 'postgres', cause: `${code}: ${withoutStatement(message)}` };
  // ioredis times a command out only while its connection is up (a closed one rejects at once): a backlog.
  if (/Command timed out/.test(message)) return { kind: 'saturated', dependency: 'redis', cause: 'command timed out' };
  if (REDIS_UNREACHABLE.test(message)) return { kind: 'unreachable', dependency: 'redis', cause: message };
  if (PG_UNREACHABLE_MESSAGE.test(message)) return { kind: 'unreachable', dependency: 'postgres', cause: withoutStatement(message) };
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return { kind: 'unreachable', dependency: guessDependency(err), cause: message };
  return undefined;
}

/** The error without the statement knex put in front of it (shorter log lines; the statement says nothing about the cause). */
function withoutStatement(message: string): string {
  const at = message.lastIndexOf(' - ');
  return at === -1 ? message : message.slice(at + 3);
}

/** A bare socket error does not say whose socket it was; ioredis's errors carry its command. */
const guessDependency = (err: Error): DependencyFailure['dependency'] => ('command' in err ? 'redis' : 'postgres');

export function classifyDependencyFailure(err: unknown): DependencyFailure | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    const found = classifyOne(current);
    if (found) return found;
    // objection wraps Postgres's own errors (DBError) and keeps the original as nativeError.
    const cause: unknown = (current as { cause?: unknown }).cause ?? (current as { nativeError?: unknown }).nativeError;
    if (cause === current) return undefined;
    current = cause;
  }
  return undefined;
}

/** Whether an error means Postgres or Redis failed us (saturated or unreachable) rather than a bug. */
export function isDependencyOutage(err: unknown): boolean {
  return classifyDependencyFailure(err) !== undefined;
}
