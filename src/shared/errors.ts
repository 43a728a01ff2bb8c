/** The one error hierarchy. src/http/middleware.ts maps it to DESIGN §4 bodies. */

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

export abstract class AppError extends Error {
  abstract readonly status: number;
  abstract readonly code: string;
  headers: Record<string, string> = {};
  /** Why the request was refused, for the log line (429 and 503 always carry one; DESIGN §12). */
  logCause?: string;
  body(): Record<string, unknown> {
    return { error: this.code, message: this.message };
  }
}

export type AuthErrorCode = 'unauthorized' | 'invalid_token' | 'token_expired';

export class AuthError extends AppError {
  readonly status = 401;
  override headers = { 'WWW-Authenticate': 'Bearer' };
  constructor(
    readonly code: AuthErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A request understood but not honoured (DESIGN §16: client-side tools, n > 1 → `unsupported_parameter`); `param` names the field. */
export class BadRequestError extends AppError {
  readonly status = 400;
  constructor(
    readonly code: 'unsupported_parameter' | 'invalid_request',
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
  override body() {
    return { ...super.body(), ...(this.param ? { param: this.param } : {}) };
  }
}

export class ForbiddenError extends AppError {
  readonly status = 403;
  readonly code = 'forbidden';
}

export class NotFoundError extends AppError {
  readonly status = 404;
  readonly code: string = 'not_found';
  constructor(
    message: string,
    /** What was looked for (`Agent`, `Run`…), when a caller must tell one miss from another. */
    readonly resource?: string,
  ) {
    super(message);
  }
}

/** DESIGN §16: an OpenAI-style `model` that names no agent of the caller's. */
export class ModelNotFoundError extends NotFoundError {
  override readonly code = 'model_not_found';
}

export class ConflictError extends AppError {
  readonly status = 409;
  constructor(
    /** `last_admin`: the change would leave no active admin (DESIGN §9); `endpoint_disabled`, `approval_not_pending`: DESIGN §10–§11; `schedule_limit`: SCHEDULES_PER_USER (§19); `not_requires_action`, `tool_output_not_pending`: client tools (§23); `dataset_full`, `dataset_limit`, `eval_final`: evals (§24); `memory_limit`: MEMORIES_PER_USER (§25). */
    readonly code: 'no_active_execution' | 'conversation_busy' | 'last_admin' | 'endpoint_disabled' | 'approval_not_pending' | 'schedule_limit' | 'not_requires_action' | 'tool_output_not_pending' | 'dataset_full' | 'dataset_limit' | 'eval_final' | 'memory_limit',
    message: string,
  ) {
    super(message);
  }
}

/** A resource that existed and is no longer kept (an expired run stream); `outcome` is what is still known of it. */
export class GoneError extends AppError {
  readonly status = 410;
  readonly code = 'gone';
  constructor(
    message: string,
    readonly outcome: Record<string, unknown> = {},
  ) {
    super(message);
  }
  override body() {
    return { ...this.outcome, ...super.body() };
  }
}

export class UnsupportedMediaTypeError extends AppError {
  readonly status = 415;
  readonly code = 'unsupported_media_type';
}

/** A request body that stopped arriving (BODY_IDLE_TIMEOUT_MS, DESIGN §21), or whose client left before sending it all. */
export class RequestTimeoutError extends AppError {
  readonly status = 408;
  readonly code = 'request_timeout';
}

export class PayloadTooLargeError extends AppError {
  readonly status = 413;
  readonly code = 'payload_too_large';
}

const retryAfter = (seconds: number) => ({ 'Retry-After': String(Math.max(1, Math.ceil(seconds))) });

export class RateLimitedError extends AppError {
  readonly status = 429;
  readonly code = 'rate_limited';
  constructor(message: string, retryAfterSeconds: number, cause?: string) {
    super(message);
    this.headers = retryAfter(retryAfterSeconds);
    this.logCause = cause ?? message;
  }
}

/** A token budget that applies is spent (DESIGN §18): `insufficient_quota`, the gateway's own word, until it resets. */
export class QuotaExceededError extends AppError {
  readonly status = 429;
  readonly code = 'insufficient_quota';
  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.headers = retryAfter(retryAfterSeconds);
    this.logCause = 'token budget spent';
  }
}

export class UnavailableError extends AppError {
  readonly status = 503;
  readonly code = 'unavailable';
  constructor(message: string, retryAfterSeconds: number, cause: string) {
    super(message);
    this.headers = retryAfter(retryAfterSeconds);
    this.logCause = cause;
  }
}

/**
 * The model gateway refused a call the request needs (an embedding or rerank model that does not
 * exist, a rejected key): `code` is the gateway's verdict, e.g. `model_not_found`. Transient
 * gateway failures are `UnavailableError`s instead (503 with Retry-After).
 */
export class BadGatewayError extends AppError {
  readonly status = 502;
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A run an OpenAI-style client waited on ended without an answer (DESIGN §16): failed → 502 with
 * the run's error code, cancelled → 409. `x-should-retry` tells OpenAI SDKs whether retrying can help.
 */
export class RunEndedError extends AppError {
  readonly status: number;
  constructor(
    readonly code: string,
    message: string,
    outcome: { cancelled: boolean; retryable: boolean },
  ) {
    super(message);
    this.status = outcome.cancelled ? 409 : 502;
    this.headers = { 'x-should-retry': String(outcome.retryable) };
  }
}

export class MethodNotAllowedError extends AppError {
  readonly status = 405;
  readonly code = 'method_not_allowed';
  constructor(method: string, path: string, allowed: string[]) {
    super(`${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`);
    this.headers = { Allow: allowed.join(', ') };
  }
}

export class ValidationError extends AppError {
  readonly status = 422;
  readonly code = 'validation_error';
  constructor(readonly detail: ValidationIssue[]) {
    super(detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
  }
  override body() {
    return { detail: this.detail };
  }
}

/**
 * Not an HTTP error: this attempt no longer owns its run (a newer attempt took it over after a
 * stalled lock), so it may neither publish nor write. Thrown by the run protocol and the run store.
 */
export class Superseded extends Error {
  constructor() {
    super('a newer attempt owns this run');
  }
}
